"""A repository case's environment: its template found and viewed (an overlay, or a copy), its own
installs, the template it publishes, and the new SDK installed or laid over a view that is still
its template's (``templates.py``, ``copy_layer.py``, ``envreuse.py``).

Kept apart from ``kinds.py``, which says which of these a kind of case runs and in what order.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from pytest_obelize_bench._util.case_error import CaseError
from pytest_obelize_bench._util.removal import remove_path
from pytest_obelize_bench.case.copy_layer import Change, apply_layer, changes, compiled_into
from pytest_obelize_bench.case.environment import (
    check_installed_version,
    compile_bytecode,
    compile_sources,
    install_pinned,
    link_mode,
    listable,
    run_install_commands,
)
from pytest_obelize_bench.case.envreuse import Install, Marks, command_material, environment_key, reuse_install
from pytest_obelize_bench.case.interpreter import Interpreter
from pytest_obelize_bench.case.run import CaseRun
from pytest_obelize_bench.case.templates import Template, Templates, copy_view, in_view
from pytest_obelize_bench.case.upper_layer import drop_caches
from pytest_obelize_bench.casefile.cases import PACK_DISTRIBUTIONS
from pytest_obelize_bench.isolation.policy import Step


def template_for(run: CaseRun, used: str) -> Template | None:
    """The finished template of the case's environment key, which this sets (None: no key)."""
    case = run.case
    legacy, _ = PACK_DISTRIBUTIONS[case.pack]
    # Taken before any command runs, and before the fix can rewrite a requirements file.
    run.install_material = command_material(case.install, run.checkout, case.sha)
    run.env_template = environment_key_of(run, [f"{legacy}=={case.from_version}"], used=used)
    if run.env_template is None:
        return None
    return Templates(run.context.templates_dir).find(run.env_template)


def own_venv_for_template(run: CaseRun, template: Template) -> None:
    """The venv the case made for itself gives way to its view of ``template`` (``take_template``)."""
    shutil.rmtree(run.checkout / ".venv")
    take_template(run, template, run.venv())


def take_template(run: CaseRun, template: Template, interpreter: Interpreter) -> None:
    """The case's venv becomes its own view of ``template``: an overlay in the sandbox, else a copy."""
    venv = run.checkout / ".venv"
    if run.overlay is not None:
        run.overlay.mount_template(template.venv)
        run.env_view = "overlay"
    else:
        # A case without a suite runs nothing in its venv that could use the template's bytecode;
        # under a sandbox the copy links to it, the template shown read-only, instead of copying it.
        if run.sandbox is not None:
            run.sandbox.expose(template.venv)
        copy_view(
            run.steps(),
            template,
            venv,
            timeout=run.limit("venv"),
            bytecode=run.case.test_cmd is not None,
            link_bytecode=run.sandbox is not None,
        )
        run.env_view = "copy"
    run.interpreter = in_view(interpreter, venv)


def own_installs(run: CaseRun) -> None:
    """Step 3: the reviewed install commands, offline when their content key was resolved before."""
    if not run.case.install:
        return

    def install(constraints: Path | None, outputs: list[str]) -> str:
        run_install_commands(
            run.steps(),
            run.case.install,
            interpreter=run.venv().executable,
            checkout=run.checkout,
            timeout=run.limit("install"),
            constraints=constraints,
            outputs=outputs,
        )
        return ""

    reused(run, [], install)


def published(run: CaseRun, install: Callable[[], str]) -> str:
    """``install()``, then the case's venv published as its key's template once the install ran."""

    def publish() -> None:
        key = run.env_template
        if key is None:
            run.env_view = "installed"
            return
        templates = Templates(run.context.templates_dir)
        compiled(run, Step.INSTALL_FROM, templates, key)
        made = templates.publish(key, run.checkout / ".venv", run.venv())
        run.env_view = "built" if made else "installed"

    return then_published(install, publish)


def compiles_for(run: CaseRun, templates: Templates, key: str) -> bool:
    """Whether the case compiles what it is about to publish as the template of ``key``: not with
    ``--bench-template-bytecode=none``, nor when another case published it first (the compiling
    is for the cases to come, and this case's publication would be refused)."""
    return run.context.template_bytecode and templates.find(key) is None


def compiled(run: CaseRun, number: int, templates: Templates, key: str) -> None:
    """Step ``bytecode`` in the case's venv, just before what it holds is published as the template
    of ``key`` (``compiles_for``)."""
    if not compiles_for(run, templates, key):
        return
    compile_bytecode(run.steps(), number=number, interpreter=run.venv().executable, timeout=run.limit("install"))


def then_published(install: Callable[[], str], publish: Callable[[], object]) -> str:
    """``install()``, then ``publish()`` once the install ran, whatever its check found.

    Published before the check's verdict is known to matter: a version mismatch is what these
    inputs install, and a case reusing the template must (and does) meet the same mismatch.
    """
    try:
        observed = install()
    except CaseError as error:
        if error.reason == "version_mismatch":
            publish()
        raise
    publish()
    return observed


def view_of_built(run: CaseRun) -> None:
    """The case that just built its key's template takes it as an overlay, as every later case does.

    Its own venv is the template's source; kept, its install of the new SDK could never become the
    template's installed layer, and the next round's case of the same key (a key of one repository's
    commit, when its install reads the checkout) installed and compiled the new SDK again: 6.9 of
    the 16 s a warm round of round 2's real repositories spent beside ``fix`` and the suites.
    The record still says ``built``.
    """
    if run.env_view != "built" or run.overlay is None or run.env_template is None:
        return
    template = Templates(run.context.templates_dir).find(run.env_template)
    if template is None:
        return
    own_venv_for_template(run, template)
    run.env_view = "built"


def unwritten_template(run: CaseRun) -> Template | None:
    """The template an overlay case's view still is after its baseline (it wrote nothing but
    bytecode caches into its venv, which are dropped); None for any other case."""
    if run.env_view not in ("overlay", "built") or run.overlay is None or run.env_template is None:
        return None
    if not run.overlay.layout.venv_layers:  # a case that built its template and kept its own venv
        return None
    base = Templates(run.context.templates_dir).find(run.env_template)
    if base is None or base.base is not None or not drop_caches(run.overlay.layout.venv_upper):
        return None
    return base


def new_sdk_over(run: CaseRun, base: Template, distribution: str, version: str, before: list[str]) -> str:
    """The installed template of ``before`` and the new pin mounted over the case's view, checked
    there; without one, the install into the view, which is then published as that template."""
    sandbox = run.overlay
    if sandbox is None:
        return install_sdk(run, Step.INSTALL_TO, "install-to", distribution, version, before)

    def publish_layer(templates: Templates, key: str) -> None:
        # An overlay's layer keeps the bytecode compiled into it (it was emptied of caches before
        # the install); a copy layer's is compiled apart instead (``layer_bytecode``).
        compiled(run, Step.INSTALL_TO, templates, key)
        templates.publish_installed(key, base, sandbox.layout.venv_upper)

    return _new_sdk_layered(
        run,
        base,
        distribution,
        version,
        before,
        form="overlay",
        lay=lambda found, _delta: sandbox.mount_template(*found.layers),
        publish=publish_layer,
    )


def unwritten_copy(run: CaseRun) -> Template | None:
    """The template a copy view still is after its baseline (nothing but bytecode caches differ
    from it: ``copy_layer.changes``); None for any other case."""
    if run.env_view != "copy" or run.env_template is None:
        return None
    base = Templates(run.context.templates_dir).find(run.env_template)
    if base is None or base.base is not None or not changes(run.checkout / ".venv", base.venv).empty:
        return None
    return base


def new_sdk_onto_copy(run: CaseRun, base: Template, distribution: str, version: str, before: list[str]) -> str:
    """The copy layer of ``before`` and the new pin applied to the case's copy, checked there;
    without one, the install into the copy, whose changes are then published as that layer."""
    venv = run.checkout / ".venv"

    def lay(found: Template, delta: Path) -> None:
        if run.sandbox is not None:  # the layer's bytecode is linked to, as the template's
            run.sandbox.expose(delta)
        try:
            apply_layer(delta, venv, bytecode=run.case.test_cmd is not None, link_bytecode=run.sandbox is not None)
        except (OSError, ValueError) as exc:
            raise CaseError("install-to", "install_failed", f"the copy layer of {found.key[:12]}: {exc}") from None

    def publish_layer(templates: Templates, key: str) -> None:
        change = changes(venv, base.venv)  # what the install wrote: the layer, and what to compile
        bytecode = layer_bytecode(run, change) if compiles_for(run, templates, key) else {}
        templates.publish_copy_layer(key, base, venv, change, bytecode)

    return _new_sdk_layered(
        run,
        base,
        distribution,
        version,
        before,
        form="copy",
        lay=lay,
        publish=publish_layer,
    )


#: The folder, in the case's own temporary folder, that step ``bytecode`` of a copy layer compiles into.
LAYER_BYTECODE = "layer-bytecode"


def layer_bytecode(run: CaseRun, change: Change) -> dict[str, Path]:
    """The bytecode of the sources an install wrote into the case's copy (``change``), compiled
    afresh for its layer (``environment.compile_sources``)."""
    venv = (run.checkout / ".venv").absolute()
    sources = [path for path in change.written if path.endswith(".py") and listable(path)]
    if not sources:
        return {}
    prefix = run.tree().tmp / LAYER_BYTECODE
    listing = run.tree().tmp / f"{LAYER_BYTECODE}.txt"
    try:
        for stale in (prefix, listing):  # whatever a suite left under these names, link or not
            remove_path(stale)
        prefix.mkdir(parents=True)  # a suite run without the sandbox may have removed its own temp folder
        listing.write_text("".join(f"{venv / path}\n" for path in sources), encoding="utf-8")
    except OSError:  # a layer without bytecode, never the case's error
        return {}
    compile_sources(
        run.steps(),
        number=Step.INSTALL_TO,
        interpreter=run.venv().executable,
        listing=listing,
        prefix=prefix,
        timeout=run.limit("install"),
    )
    return compiled_into(prefix, venv, sources)


def _new_sdk_layered(
    run: CaseRun,
    base: Template,
    distribution: str,
    version: str,
    before: list[str],
    *,
    form: str,
    lay: Callable[[Template, Path], None],
    publish: Callable[[Templates, str], object],
) -> str:
    """What the overlay and the copy view share: the installed template of ``before`` and the new
    pin, when one of this ``form`` was built over ``base``, is laid on the case's view and checked
    there; without one, the pin is installed into the view and what that changed is published."""
    key = environment_key_of(run, [*before, f"{distribution}=={version}"])
    if key is None:
        return install_sdk(run, Step.INSTALL_TO, "install-to", distribution, version, before)
    templates = Templates(run.context.templates_dir)
    run.env_template_after = key
    found = templates.find(key)
    if found is not None and found.base == base.key and found.form == form and found.delta is not None:
        lay(found, found.delta)
        return check_installed_version(
            run.steps(),
            number=Step.INSTALL_TO,
            name="install-to-check",
            distribution=distribution,
            version=version,
            interpreter=run.venv().executable,
        )
    return then_published(
        lambda: install_sdk(run, Step.INSTALL_TO, "install-to", distribution, version, before),
        lambda: publish(templates, key),
    )


def install_sdk(run: CaseRun, number: int, name: str, distribution: str, version: str, before: list[str]) -> str:
    """Step ``name``: one SDK pin installed and checked after the pins ``before`` (see ``reused``)."""
    return reused(
        run,
        [*before, f"{distribution}=={version}"],
        lambda constraints, outputs: install_pinned(
            run.steps(),
            number=number,
            name=name,
            distribution=distribution,
            version=version,
            interpreter=run.venv().executable,
            timeout=run.limit("install"),
            constraints=constraints,
            outputs=outputs,
        ),
    )


def environment_key_of(run: CaseRun, installs: list[str], *, used: str | None = None) -> str | None:
    """The key of the case's environment once ``installs`` ran after its install commands (on the
    interpreter ``used``, by default the case venv's)."""
    return environment_key(
        interpreter_used=run.venv().used if used is None else used,
        exclude_newer=run.context.exclude_newer,
        uv_cache=run.env.get("UV_CACHE_DIR"),
        link_mode=link_mode(run.env),
        commands=run.install_material,
        installs=installs,
    )


def reused(run: CaseRun, installs: list[str], install: Install) -> str:
    """An install, offline and held to its versions when an identical environment was resolved
    (see envreuse.py); the constraints file goes in the case's TMPDIR, which its steps can read."""
    key = environment_key_of(run, installs)
    marks = Marks(Path(run.context.work_root))
    return reuse_install(install, marks=marks, key=key, exclude_newer=run.context.exclude_newer, scratch=run.tree().tmp)


__all__ = [
    "environment_key_of",
    "install_sdk",
    "new_sdk_onto_copy",
    "new_sdk_over",
    "own_installs",
    "own_venv_for_template",
    "published",
    "reused",
    "take_template",
    "template_for",
    "then_published",
    "unwritten_copy",
    "unwritten_template",
    "view_of_built",
]
