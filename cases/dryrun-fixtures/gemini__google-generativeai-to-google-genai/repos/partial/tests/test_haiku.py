from unittest import mock

import haiku


@mock.patch("google.generativeai.GenerativeModel")
def test_haiku_asks_the_model(model):
    model.return_value.generate_content.return_value.text = "autumn"
    assert haiku.haiku("leaves") == "autumn"
