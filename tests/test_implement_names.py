"""Where a text writes a name: alone, inside a longer name, or as what a number counts."""

from __future__ import annotations

from hypothesis import given, strategies as st

from bddgen.implement.names import is_counted, is_name_fragment

MARWOOD = (
    "Elias Marwood made his debut there in 2012, won the Velorian Young Player of the Year award in 2014 and the "
    "Velorian Golden Boot the same season with 19 goals, and joined Redmarsh Rovers in 2017 for 8.4 million marks."
)


def test_pieces_of_a_long_name_are_fragments_and_whole_names_are_not() -> None:
    assert is_name_fragment("the Velorian Young Player", MARWOOD)
    assert is_name_fragment("the Year award", MARWOOD)
    for whole in ("Elias Marwood", "Redmarsh Rovers", "the Velorian Golden Boot", "the Velorian Young Player of the Year award"):
        assert not is_name_fragment(whole, MARWOOD), whole


def test_a_short_form_written_once_on_its_own_is_a_name() -> None:
    text = "Orlanmouth Wanderers, founded in 1899, play at Seagate Park. Since then the Wanderers have usually finished in mid-table."
    assert is_name_fragment("Wanderers", "Orlanmouth Wanderers, founded in 1899, play at Seagate Park.")
    assert not is_name_fragment("Wanderers", text)
    # a name ends at a sentence end or a comma: the next sentence's first word does not lengthen it
    assert not is_name_fragment("Seagate Park", "They play at Seagate Park. Crowds are large.")
    assert is_name_fragment("Harbour City", "Harbour City F.C. won it.")
    assert not is_name_fragment("Harbour City FC", "while Harbour City FC and Calderford United have fielded reserves")


def test_what_a_number_counts_is_not_a_fact_but_a_name_after_a_year_is() -> None:
    assert is_counted("Varen Cups", "The club won five national championships and has six Varen Cups.")
    assert is_counted("Varen Cups", "It has 6 Varen Cups.")
    assert not is_counted("Varen Cups", "It won the Varen Cups of 1990 and 1995.")
    assert not is_counted("Velorian Premier Division", "It finished ninth in the 2017 Velorian Premier Division season.")


@given(st.text(max_size=120), st.text(min_size=1, max_size=20))
def test_any_text_and_name_give_an_answer_without_error(text: str, name: str) -> None:
    assert isinstance(is_name_fragment(name, text), bool) and isinstance(is_counted(name, text), bool)
    # a name the text never writes is neither a fragment nor counted there
    if name.strip() not in text:
        assert not is_counted(name, text)
