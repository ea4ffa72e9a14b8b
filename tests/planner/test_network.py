"""build_network: subscripts bound to shapes, every refusal with a message naming the problem."""

from __future__ import annotations

import pytest

from estimator import CountOverflow, EinsumError
from estimator.planner import build_network, network_from_dims


def test_binds_labels_in_order_of_first_appearance():
    network = build_network("ij,jk,kl->il", [(1000, 1000), (1000, 64), (64, 10)])
    assert network.sizes == (("i", 1000), ("j", 1000), ("k", 64), ("l", 10))
    assert network.canonical == "ij,jk,kl->il"
    assert network.input_masks == (0b0011, 0b0110, 0b1100)
    assert network.output_mask == 0b1001


def test_implicit_output_is_the_indices_seen_once_sorted():
    assert build_network("jk,ij", [(2, 3), (4, 2)]).output == "ik"


def test_ellipsis_dims_get_unused_letters_a_user_could_paste_back():
    network = build_network("...ij,...jk->...ik", [(8, 4, 2, 3), (4, 3, 5)])
    assert network.inputs[0][2:] == "ij" and network.inputs[1][1:] == "jk"
    assert all(label.isascii() and label.isalpha() for label in network.canonical if label not in ",->")
    assert dict(network.sizes)[network.inputs[0][0]] == 8


@pytest.mark.parametrize(
    "subscripts, shapes, fragment",
    [
        ("ij,jk->ik", [(2, 3), (3, 4, 5)], "rank 3"),
        ("ij,jk->ik", [(2, 3), (4, 5)], "index 'j' is bound to 3 and to 4"),
        ("ij,jk->iz", [(2, 3), (3, 4)], "output index 'z' does not appear"),
        ("ii,ij->j", [(2, 2), (2, 3)], "repeated within one operand"),
        ("ij,jk,kl->il", [(2, 3), (3, 4)], "3 subscript terms for 2 operands"),
        ("ij,jk->ik", [(2, 0), (0, 4)], "sizes must be positive"),
        ("ij,jk->ik", [(2, True), (3, 4)], "expected an int"),
        ("ij,jk->ik", [(2, 3.0), (3, 4)], "expected an int"),
        ("ij->i->j", [(2, 3)], "more than one '->'"),
        ("i1,1j", [(2, 3), (3, 2)], "invalid index label"),
        ("...ij,...jk->ik", [(2, 3, 4), (5, 4, 6)], "'...' is bound to 2 and to 5"),
        ("ij", "2x3", "one shape"),
    ],
)
def test_refusals_name_the_problem(subscripts, shapes, fragment):
    with pytest.raises(EinsumError) as error:
        build_network(subscripts, shapes)
    assert fragment in str(error.value)


def test_size_one_broadcasts_and_is_recorded():
    network = build_network("bij,bjk->bik", [(1, 2, 3), (8, 3, 4)])
    assert dict(network.sizes)["b"] == 8
    assert network.broadcasts == (("b", 1, 8),)


def test_operand_over_the_count_ceiling_is_refused():
    with pytest.raises(CountOverflow):
        build_network("ijk,k->ij", [(2**31, 2**31, 4), (4,)])


def test_dims_bind_letters_directly():
    network = network_from_dims("ij,jk->ik", {"i": 2, "j": 3, "k": 4})
    assert network.shapes == ((2, 3), (3, 4))
    with pytest.raises(EinsumError, match="no size given for index 'k'"):
        network_from_dims("ij,jk->ik", {"i": 2, "j": 3})
    with pytest.raises(EinsumError, match="'z' does not appear"):
        network_from_dims("ij,jk->ik", {"i": 2, "j": 3, "k": 4, "z": 1})
    with pytest.raises(EinsumError, match="ellipsis"):
        network_from_dims("...ij->...i", {"i": 2, "j": 3})
