"""The run's tables about particular objects (memo keys, module paths, incomplete objects) tell
objects apart by identity and hold them, so CPython reusing a freed object's id cannot make a newer
object answer for an older one (a memo hit returning another object's result, a module taking a
dead module's path)."""

import gc
import weakref

from tensorcost_lint.analysis.facts import ModuleFact
from tensorcost_lint.whole_model.python.known_floats import FloatValues
from tensorcost_lint.whole_model.run import code_calls
from tensorcost_lint.whole_model.values.identity import IdentityMap, IdentitySet, Pair, Same


class _Box:
    """An unhashable object, as a container value of the run is."""

    __hash__ = None

    def __init__(self, items):
        self.items = items


def test_a_table_holds_what_it_is_keyed_by_so_its_id_is_never_reused():
    table, marks = IdentityMap(), IdentitySet()
    module = _Box([])  # an object of the run, as a module's SelfFact is
    alive = weakref.ref(module)
    table[module] = "transformer.h.0.attn"
    marks.add(Pair((module, "to_v_gate")))
    del module
    gc.collect()
    assert alive() is not None  # held: no newer object can take its id while the table lives
    assert table.get(alive()) == "transformer.h.0.attn"
    assert Pair((alive(), "to_v_gate")) in marks and Pair((alive(), "to_q")) not in marks


def test_equal_objects_are_two_entries():
    # two equal layer facts are two modules, each with its own path and parameters
    first, second = ModuleFact("linear", 64, 64), ModuleFact("linear", 64, 64)
    assert first == second and first is not second
    table = IdentityMap()
    table[first] = "q_proj"
    assert first in table and second not in table and table.get(second, "none") == "none"
    table.setdefault(second, "k_proj")
    assert [value for _, value in table.items()] == ["q_proj", "k_proj"]


def test_a_memo_key_holds_an_unhashable_argument_and_tells_it_apart_from_an_equal_one():
    floats = FloatValues()
    box = _Box([1, 2])
    alive = weakref.ref(box)
    key = code_calls._key(box, floats)
    del box
    gc.collect()
    assert alive() is not None  # the memo's key keeps the argument it was computed for
    assert key == code_calls._key(alive(), floats)
    assert key != code_calls._key(_Box([1, 2]), floats)  # an equal object is another call
    assert code_calls._key([alive()], floats) == ("id", (Same(alive()),))
