"""Exact integer polynomials over dimension names: element counts, FLOPs and bytes as formulas.

`2*batch*heads*seq^2*d_head` is what a user reads in a finding, and `degree("seq") == 2` is what
lets a message say "x4 when seq doubles". Atoms are dim names, or (opaquely) a non-polynomial
expression such as `d_model//n_heads`, which is evaluated with exact division when sizes are bound.

Equality and hashing are mathematical (over the canonical term table); the first-appearance order
of atoms is kept beside it only to render formulas in shape order (`batch*heads*seq`, not sorted).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

from .dim_evaluation import evaluate_dim
from .dim_parser import parse_dim_expr
from .dim_records import BinOp, Const, DimExpr, Sym, fold_dim, free_names, render_dim
from .errors import ShapeError
from .limits import MAX_SIZE

# Counts in cost models are products of a handful of dims; these bounds only stop runaway input
# (`p ** 10**6`, products of thousands of sums) from taking unbounded time and memory.
MAX_TERMS = 4096
MAX_DEGREE = 256

Monomial = tuple[tuple[str, int], ...]  # (atom, exponent) pairs sorted by atom


def _is_expression(atom: str) -> bool:
    """Opaque expression atoms are rendered `//` divisions; every other atom is a dim name, even
    one that is not an identifier (a caller's `Sym("*batch")` or `Sym("cfg.n_embd")`)."""
    return "//" in atom


@lru_cache(maxsize=1024)
def _atom_expr(atom: str) -> DimExpr:
    return parse_dim_expr(atom, allow_unknown=False)


def _atom_names(atom: str) -> tuple[str, ...]:
    if not _is_expression(atom):
        return (atom,)
    return tuple(sorted(free_names(_atom_expr(atom))))


def _mono_degree(mono: Monomial) -> int:
    return sum(exp for _, exp in mono)


def _merge_order(first: tuple[str, ...], second: Iterable[str]) -> tuple[str, ...]:
    seen = set(first)
    extra = [a for a in second if a not in seen and not seen.add(a)]
    return first + tuple(extra) if extra else first


@dataclass(frozen=True, slots=True)
class Polynomial:
    terms: tuple[tuple[Monomial, int], ...]  # canonical: sorted monomials, non-zero coefficients
    order: tuple[str, ...] = field(default=(), compare=False)  # first appearance, for rendering

    # -- construction -------------------------------------------------------------------------
    @staticmethod
    def _make(table: dict[Monomial, int], order: tuple[str, ...]) -> Polynomial:
        terms = tuple(sorted((m, c) for m, c in table.items() if c != 0))
        if len(terms) > MAX_TERMS:
            raise ShapeError(f"polynomial has more than {MAX_TERMS} terms; refused")
        return Polynomial(terms, order)

    @classmethod
    def const(cls, n: int) -> Polynomial:
        if type(n) is not int:
            raise TypeError(f"Polynomial.const expects an int, got {type(n).__name__}")
        return cls._make({(): n}, ())

    @classmethod
    def atom(cls, name: str) -> Polynomial:
        if type(name) is not str or not name.strip():
            raise ShapeError(f"not a dimension atom: {name!r}")
        if _is_expression(name):
            _atom_expr(name)  # an opaque atom must be an expression we can evaluate later
        return cls._make({((name, 1),): 1}, (name,))

    @classmethod
    def from_dim(cls, d: DimExpr) -> Polynomial | None:
        """The polynomial of a dimension expression; None when any part of it is Unknown."""

        def leaf(d: DimExpr) -> Polynomial | None:
            if type(d) is Sym:
                return cls.atom(d.name)
            return cls.const(d.value) if type(d) is Const else None

        def combine(op: str, left, right, d) -> Polynomial | None:
            if left is None or right is None:
                return None
            if op == "+":
                return left + right
            if op == "-":
                return left - right
            if op == "*":
                return left * right
            quotient = left.exact_quotient(right)
            if quotient is not None:
                return quotient
            text = render_dim(BinOp("//", left.to_dim(canonical=True), right.to_dim(canonical=True)))
            return cls._make({((text, 1),): 1}, (text,))

        return fold_dim(d, leaf, combine)

    @classmethod
    def from_dims(cls, dims: Iterable[DimExpr]) -> Polynomial | None:
        """The element count of a shape (product of its dims); None when a dim is Unknown."""
        total = cls.const(1)
        for d in dims:
            factor = cls.from_dim(d)
            if factor is None:
                return None
            total = total * factor
        return total

    # -- arithmetic ---------------------------------------------------------------------------
    @staticmethod
    def _coerce(other: object) -> Polynomial | None:
        if type(other) is Polynomial:
            return other
        if type(other) is int:
            return Polynomial.const(other)
        return None

    def __add__(self, other: object) -> Polynomial:
        rhs = self._coerce(other)
        if rhs is None:
            return NotImplemented
        table = dict(self.terms)
        for mono, coeff in rhs.terms:
            table[mono] = table.get(mono, 0) + coeff
        return self._make(table, _merge_order(self.order, rhs.order))

    __radd__ = __add__

    def __neg__(self) -> Polynomial:
        return Polynomial(tuple((m, -c) for m, c in self.terms), self.order)

    def __sub__(self, other: object) -> Polynomial:
        rhs = self._coerce(other)
        if rhs is None:
            return NotImplemented
        return self + (-rhs)

    def __rsub__(self, other: object) -> Polynomial:
        lhs = self._coerce(other)
        if lhs is None:
            return NotImplemented
        return lhs + (-self)

    def __mul__(self, other: object) -> Polynomial:
        rhs = self._coerce(other)
        if rhs is None:
            return NotImplemented
        if len(self.terms) * len(rhs.terms) > MAX_TERMS * 4:
            raise ShapeError(f"polynomial product too large (over {MAX_TERMS} terms); refused")
        table: dict[Monomial, int] = {}
        for m1, c1 in self.terms:
            for m2, c2 in rhs.terms:
                mono = _mono_product(m1, m2)
                table[mono] = table.get(mono, 0) + c1 * c2
        return self._make(table, _merge_order(self.order, rhs.order))

    def __rmul__(self, other: object) -> Polynomial:
        lhs = self._coerce(other)
        if lhs is None:
            return NotImplemented
        return lhs * self

    def __pow__(self, n: int) -> Polynomial:
        if type(n) is not int or n < 0:
            raise ValueError(f"Polynomial powers take a non-negative int, got {n!r}")
        if n * self.total_degree() > MAX_DEGREE:
            raise ShapeError(f"polynomial degree would exceed {MAX_DEGREE}; refused")
        result, base = Polynomial.const(1), self
        while n:
            if n & 1:
                result = result * base
            n >>= 1
            if n:
                base = base * base
        return result

    def exact_quotient(self, divisor: Polynomial) -> Polynomial | None:
        """self / divisor when the divisor is one positive term dividing every term exactly."""
        if len(divisor.terms) != 1 or divisor.terms[0][1] <= 0:
            return None
        d_mono, d_coeff = divisor.terms[0]
        d_exps = dict(d_mono)
        table: dict[Monomial, int] = {}
        for mono, coeff in self.terms:
            exps = dict(mono)
            if coeff % d_coeff or any(exps.get(a, 0) < e for a, e in d_exps.items()):
                return None
            reduced = tuple((a, e - d_exps.get(a, 0)) for a, e in mono if e - d_exps.get(a, 0) > 0)
            table[reduced] = coeff // d_coeff
        return self._make(table, self.order)

    # -- questions ----------------------------------------------------------------------------
    def total_degree(self) -> int:
        return max((_mono_degree(m) for m, _ in self.terms), default=0)

    def degree(self, name: str) -> int:
        return max((dict(m).get(name, 0) for m, _ in self.terms), default=0)

    @property
    def constant(self) -> int | None:
        """The value when the polynomial has no atoms, else None."""
        if not self.terms:
            return 0
        if len(self.terms) == 1 and self.terms[0][0] == ():
            return self.terms[0][1]
        return None

    def atoms(self) -> tuple[str, ...]:
        present = {a for m, _ in self.terms for a, _ in m}
        ordered = [a for a in self.order if a in present]
        return tuple(ordered) + tuple(sorted(present.difference(ordered)))

    def unbound(self, sizes: Mapping[str, int]) -> tuple[str, ...]:
        names: list[str] = []
        for atom in self.atoms():
            for name in _atom_names(atom):
                if name not in sizes and name not in names:
                    names.append(name)
        return tuple(names)

    def evaluate(self, sizes: Mapping[str, int]) -> int:
        """The exact value under `sizes`; ShapeError names unbound dims or refuses overflow."""
        missing = self.unbound(sizes)
        if missing:
            raise ShapeError(f"unbound dims: {', '.join(missing)} (in {self.render()})")
        values: dict[str, int] = {}
        for atom in self.atoms():
            if not _is_expression(atom):
                values[atom] = sizes[atom]
            else:
                value = evaluate_dim(_atom_expr(atom), sizes)
                assert value is not None  # every name was bound above
                values[atom] = value
        total = 0
        for mono, coeff in self.terms:
            term = coeff
            for atom, exp in mono:
                term *= values[atom] ** exp
            total += term
        if total > MAX_SIZE or total < -MAX_SIZE:
            raise ShapeError(f"count overflow: {self.render()} is {len(str(abs(total)))} digits, above 2**63-1")
        return total

    def growth(self, name: str, factor: int | Fraction = 2) -> Fraction | None:
        """How the value scales when `name` is multiplied by `factor` (4 for seq^2 and factor 2).

        Exact only when every term has the same degree in `name`; None otherwise, or when `name`
        hides inside an opaque atom such as `seq//2`.
        """
        if not self.terms:
            return None
        if any(_is_expression(a) and name in _atom_names(a) for a in self.atoms()):
            return None
        degrees = {dict(m).get(name, 0) for m, _ in self.terms}
        if len(degrees) != 1:
            return None
        return Fraction(factor) ** degrees.pop()

    # -- rendering ----------------------------------------------------------------------------
    def _position(self, atom: str) -> tuple[int, str]:
        try:
            return (self.order.index(atom), atom)
        except ValueError:
            return (len(self.order), atom)

    def _term_key(self, mono: Monomial) -> tuple:
        positions = sorted(self._position(a) for a, e in mono for _ in range(e))
        return (-_mono_degree(mono), positions)

    def _ordered_terms(self, canonical: bool) -> list[tuple[Monomial, int]]:
        if canonical:
            return sorted(self.terms, key=lambda t: (-_mono_degree(t[0]), t[0]))
        return sorted(self.terms, key=lambda t: self._term_key(t[0]))

    def _ordered_atoms(self, mono: Monomial, canonical: bool) -> list[tuple[str, int]]:
        return list(mono) if canonical else sorted(mono, key=lambda ae: self._position(ae[0]))

    def render(self) -> str:
        """`2*batch*heads*seq^2*d_head`; sums by degree, then order of appearance; `0` if empty."""
        if not self.terms:
            return "0"
        parts: list[str] = []
        multi = len(self.terms) > 1
        for mono, coeff in self._ordered_terms(canonical=False):
            factors = []
            magnitude = abs(coeff)
            if magnitude != 1 or not mono:
                factors.append(str(magnitude))
            lone = len(mono) == 1 and mono[0][1] == 1 and not factors
            for atom, exp in self._ordered_atoms(mono, canonical=False):
                text = atom
                if not atom.isidentifier() and (not lone or (multi and any(c in atom for c in "+-"))):
                    text = f"({atom})"
                factors.append(text if exp == 1 else f"{text}^{exp}")
            body = "*".join(factors)
            if not parts:
                parts.append(f"-{body}" if coeff < 0 else body)
            else:
                parts.append(f" - {body}" if coeff < 0 else f" + {body}")
        return "".join(parts)

    def __str__(self) -> str:
        return self.render()

    def __repr__(self) -> str:
        return f"Polynomial({self.render()!r})"

    def to_dim(self, canonical: bool = False) -> DimExpr:
        """A dimension expression with this value (canonical=True orders atoms by name)."""
        result: DimExpr | None = None
        for mono, coeff in self._ordered_terms(canonical):
            term: DimExpr | None = None
            for atom, exp in self._ordered_atoms(mono, canonical):
                factor = _atom_expr(atom) if _is_expression(atom) else Sym(atom)
                for _ in range(exp):
                    term = factor if term is None else BinOp("*", term, factor)
            magnitude = abs(coeff)
            if term is None:
                term = Const(magnitude)
            elif magnitude != 1:
                term = BinOp("*", Const(magnitude), term)
            if result is None:
                result = term if coeff > 0 else _negated(term)
            else:
                result = BinOp("+" if coeff > 0 else "-", result, term)
        return Const(0) if result is None else result


def _negated(term: DimExpr) -> DimExpr:
    if type(term) is Const:
        return Const(-term.value)
    if type(term) is BinOp and term.op == "*" and type(term.left) is Const:
        return BinOp("*", Const(-term.left.value), term.right)
    return BinOp("*", Const(-1), term)


def _mono_product(m1: Monomial, m2: Monomial) -> Monomial:
    if not m1:
        return m2
    if not m2:
        return m1
    exps = dict(m1)
    for atom, exp in m2:
        exps[atom] = exps.get(atom, 0) + exp
    if sum(exps.values()) > MAX_DEGREE:
        raise ShapeError(f"polynomial degree would exceed {MAX_DEGREE}; refused")
    return tuple(sorted(exps.items()))

