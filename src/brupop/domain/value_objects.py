"""Frozen, typed value objects that cost nothing to define: `@value_object` on a class.

The agent starts under `cpu: 10m`, where each millisecond of CPU is a tenth of a second before a
rebooted node reports. On Python 3.11 `@dataclass(frozen=True)` compiles six methods per class
at import (about 1.2 ms each class, and `inspect` with it); this decorator attaches shared
methods instead (about 0.04 ms). Type checkers read it as a frozen dataclass
(`dataclass_transform`). What it keeps of a frozen dataclass: the constructor by position or
name with defaults and `field(default_factory=...)`, `__post_init__`, equality within the
same class, hashing, the repr, `__match_args__`, refusing assignment, and `dataclasses.replace`,
`fields` and `asdict`. `replace` and `field_names` here do the same without `dataclasses`.
"""

from __future__ import annotations

from collections.abc import Callable

TYPE_CHECKING = False  # keep `typing` (about 3 ms) out of the agent's start
if TYPE_CHECKING:
    from typing import Any, TypeVar, dataclass_transform

    T = TypeVar("T")
else:

    def dataclass_transform(**_: object) -> Callable[[type], type]:
        """At run time the marker is for type checkers alone: it leaves the decorator as is."""
        return lambda decorator: decorator


_MISSING: Any = object()


class FrozenValueError(AttributeError):
    """A value object's field was assigned or deleted after it was built."""


class _Factory:
    """A field's default made anew for each value (a list, another value object)."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


def field(*, default_factory: Callable[[], T]) -> T:
    """A field whose default is `default_factory()`, called for each new value."""
    made: Any = _Factory(default_factory)
    typed: T = made  # the field's own type, as `dataclasses.field` says
    return typed


def _init(self: Any, *args: Any, **kwargs: Any) -> None:
    cls = type(self)
    names: tuple[str, ...] = cls.__value_fields__
    if len(args) > len(names):
        raise TypeError(f"{cls.__name__}() takes at most {len(names)} positional arguments")
    values = dict(zip(names, args, strict=False))
    for name, given in kwargs.items():
        if name in values or name not in names:
            raise TypeError(f"{cls.__name__}() got an unexpected or repeated argument {name!r}")
        values[name] = given
    if len(values) < len(names):
        defaults: dict[str, Any] = cls.__value_defaults__
        for name in names:
            if name not in values:
                default = defaults.get(name, _MISSING)
                if default is _MISSING:
                    raise TypeError(f"{cls.__name__}() missing required argument: {name!r}")
                values[name] = default.make() if type(default) is _Factory else default
    self.__dict__.update(values)
    if cls.__value_post_init__:
        self.__post_init__()


def _fields_of(value: Any) -> tuple[Any, ...]:
    return tuple([getattr(value, name) for name in value.__value_fields__])


def _repr(self: Any) -> str:
    shown = ", ".join([f"{name}={getattr(self, name)!r}" for name in self.__value_fields__])
    return f"{type(self).__qualname__}({shown})"


def _eq(self: Any, other: object) -> object:
    if other.__class__ is not self.__class__:
        return NotImplemented
    return _fields_of(self) == _fields_of(other)


def _hash(self: Any) -> int:
    return hash(_fields_of(self))


def _refuse(self: Any, name: str, *_: Any) -> None:
    raise FrozenValueError(f"cannot assign to field {name!r}")


class _DataclassFields:
    """`__dataclass_fields__`, built when first read, so that `dataclasses.replace`, `fields`,
    `asdict` and `is_dataclass` take value objects; whoever reads it has imported `dataclasses`
    already, so the agent's start does not."""

    def __get__(self, _instance: object, owner: type[Any]) -> dict[str, Any]:
        import dataclasses
        import typing

        fields = {}
        annotations = owner.__dict__.get("__annotations__", {})  # noqa: RUF063 (as above)
        for name in owner.__value_fields__:
            default = owner.__value_defaults__.get(name, _MISSING)
            if type(default) is _Factory:
                described: Any = dataclasses.field(default_factory=default.make)
            else:
                described = dataclasses.field(
                    default=dataclasses.MISSING if default is _MISSING else default
                )
            described.name, described.type = name, annotations.get(name, typing.Any)
            # What @dataclass marks an instance field with (Python 3.11 to 3.13).
            described._field_type = dataclasses._FIELD  # type: ignore[attr-defined]
            fields[name] = described
        type.__setattr__(owner, "__dataclass_fields__", fields)  # read once per class
        return fields


def _is_class_var(annotation: object) -> bool:
    return str(annotation).startswith(("ClassVar", "typing.ClassVar"))


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def value_object(cls: type[T]) -> type[T]:
    """Make `cls` a frozen value object of its annotated fields, in their order (the fields of a
    value-object base class first)."""
    inherited: tuple[str, ...] = getattr(cls, "__value_fields__", ())
    own = cls.__dict__.get("__annotations__", {})  # noqa: RUF063 (`inspect` costs 9 ms here)
    names = inherited + tuple(
        name for name, kind in own.items() if not _is_class_var(kind) and name not in inherited
    )
    defaults = dict(getattr(cls, "__value_defaults__", {}))
    for name in names:
        if name in cls.__dict__:
            defaults[name] = cls.__dict__[name]
            if type(defaults[name]) is _Factory:
                delattr(cls, name)  # as dataclasses do: no shared list on the class
    methods = {"__init__": _init, "__eq__": _eq, "__hash__": _hash}
    methods |= {"__setattr__": _refuse, "__delattr__": _refuse}
    if "__repr__" not in cls.__dict__:
        methods["__repr__"] = _repr
    for name, method in methods.items():
        type.__setattr__(cls, name, method)
    type.__setattr__(cls, "__value_fields__", names)
    type.__setattr__(cls, "__value_defaults__", defaults)
    type.__setattr__(cls, "__value_post_init__", hasattr(cls, "__post_init__"))
    type.__setattr__(cls, "__match_args__", names)
    type.__setattr__(cls, "__dataclass_fields__", _DataclassFields())
    return cls


def field_names(value: object) -> tuple[str, ...]:
    """The fields of a value object (or its class), in their order."""
    names: tuple[str, ...] = value.__value_fields__  # type: ignore[attr-defined]
    return names


def replace(value: T, **changes: Any) -> T:
    """A copy of `value` with `changes`, built (and checked) as a new value."""
    current = {name: getattr(value, name) for name in field_names(value)}
    made: T = type(value)(**(current | changes))
    return made
