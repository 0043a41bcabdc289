"""The source of :mod:`brain_graph.core.wire_generated`: the TypedDicts of the graph state, written from
the pydantic models of :mod:`brain_graph.core.contracts` that :func:`~brain_graph.core.contracts.state_form`
marks, in the order they are defined.

Each TypedDict has its state form's name and docstring and the model's fields by their camelCase
names, in order, every one required (``to_wire()`` writes them all). A nested model becomes its state
form, ``Annotated`` metadata is dropped and a ``Literal`` that :mod:`~brain_graph.core.contracts` names
(``SourceKind``) keeps its name. ``scripts/generate_wire.py`` writes :func:`render_wire` to
:data:`WIRE_GENERATED_PATH`; a test checks the committed file is what it returns.
"""

from __future__ import annotations

import json
import types
import typing
from pathlib import Path
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import BaseModel

from brain_graph.core import contracts
from brain_graph.core.contracts import STATE_FORMS

WIRE_GENERATED_PATH = Path(__file__).with_name("wire_generated.py")

HEADER = '''"""The TypedDicts of the wire contracts in the graph state (import them from
:mod:`brain_graph.core.wire`).

Generated from :mod:`brain_graph.core.contracts` by ``scripts/generate_wire.py``: edit the models there
and run it; a test fails when this file is not what it writes.
"""

from __future__ import annotations
'''


class _Writer:
    """Python annotations for model field types, noting the ``typing`` names they use."""

    def __init__(self) -> None:
        self.literal_names = {value: name for name, value in vars(contracts).items() if get_origin(value) is Literal}
        self.typing_names: set[str] = set()

    def literal(self, annotation: Any) -> str:
        self.typing_names.add("Literal")
        return f"Literal[{', '.join(json.dumps(value) for value in get_args(annotation))}]"

    def annotation(self, annotation: Any) -> str:
        origin = get_origin(annotation)
        if origin is Annotated:
            return self.annotation(get_args(annotation)[0])
        if origin in (typing.Union, types.UnionType):
            return " | ".join(self.annotation(arg) for arg in get_args(annotation))
        if origin is Literal:
            return self.literal_names.get(annotation) or self.literal(annotation)
        if origin in (list, dict):
            return f"{origin.__name__}[{', '.join(self.annotation(arg) for arg in get_args(annotation))}]"
        if annotation is Any:
            self.typing_names.add("Any")
            return "Any"
        if annotation is type(None):
            return "None"
        if annotation in (str, int, float, bool):
            return str(annotation.__name__)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            if annotation not in STATE_FORMS:
                raise TypeError(f"{annotation.__name__} is nested in a state form without one of its own")
            return STATE_FORMS[annotation].name
        raise TypeError(f"no state-form annotation for {annotation!r}")


def _docstring(text: str) -> list[str]:
    """The lines of a class docstring of ``text``, indented for the class body."""
    lines = [f"    {line}" if line else "" for line in text.splitlines()]
    lines[0] = f'    """{lines[0].strip()}'
    lines[-1] += '"""'
    return lines


def render_wire() -> str:
    """The text of :data:`WIRE_GENERATED_PATH`."""
    writer = _Writer()
    classes = []
    for model, form in STATE_FORMS.items():
        fields = [
            f"    {field.alias or name}: {writer.annotation(field.annotation)}"
            for name, field in model.model_fields.items()
        ]
        classes.append("\n".join([f"class {form.name}(TypedDict):", *_docstring(form.doc), "", *fields]) + "\n")
    aliases = "".join(f"{name} = {writer.literal(value)}\n" for value, name in writer.literal_names.items())
    imports = "from typing_extensions import TypedDict\n"
    if writer.typing_names:
        imports = f"from typing import {', '.join(sorted(writer.typing_names))}\n\n{imports}"
    head = f"{HEADER}\n{imports}" + (f"\n{aliases}" if aliases else "")
    return "\n\n".join([head, *classes])
