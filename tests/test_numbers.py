"""Numbers as people write them: currency signs and codes, thousands separators, parentheses for
negatives, a dash for nil, percentages and scale words; the unit a table states in a header; and the
exact check of an answer, which reads its numbers the same way."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bddgen.numbers import Quantity, Unit, format_number, is_year, parse_number, read_quantity, table_unit, year_of
from bddgen.answer_checks import contains_exact


@pytest.mark.parametrize(
    ("cell", "quantity"),
    [
        ("$ 1,452.4", Quantity(1452.4, "USD")),
        ("$  1,146.2", Quantity(1146.2, "USD")),
        ("(3.2)", Quantity(-3.2)),
        ("(19,911)", Quantity(-19911.0)),
        ("$(89.7)", Quantity(-89.7, "USD")),
        ("(248%)", Quantity(-248.0, "%")),
        ("-8.7", Quantity(-8.7)),
        ("\u22128.7", Quantity(-8.7)),
        ("12.5%", Quantity(12.5, "%")),
        ("4.50 %", Quantity(4.5, "%")),
        ("3 percent", Quantity(3.0, "%")),
        ("€35", Quantity(35.0, "EUR")),
        ("35 EUR", Quantity(35.0, "EUR")),
        ("£0.2", Quantity(0.2, "GBP")),
        ("¥ 1,000", Quantity(1000.0, "JPY")),
        ("USD 12", Quantity(12.0, "USD")),
        ("1.2bn", Quantity(1.2, scale="billion")),
        ("$4 million", Quantity(4.0, "USD", "million")),
        ("€35m", Quantity(35.0, "EUR", "million")),
        ("5k", Quantity(5.0, scale="thousand")),
        ("—", Quantity(0.0, nil=True)),
        ("–", Quantity(0.0, nil=True)),
        ("$—", Quantity(0.0, "USD", nil=True)),
        ("- - %", Quantity(0.0, "%", nil=True)),
    ],
)
def test_cells_as_reports_write_them(cell: str, quantity: Quantity) -> None:
    assert read_quantity(cell) == quantity


@pytest.mark.parametrize("cell", ["", "Saltmere", "12 goals", "2019-01-02", "1-2", "-(3)", "(3", "3)", "$5 EUR", "5%m", "10:45", "v2"])
def test_other_cells_are_no_quantity(cell: str) -> None:
    assert read_quantity(cell) is None


def test_parse_number_reads_the_first_number_of_other_cells() -> None:
    assert parse_number("12 goals") == 12.0 and parse_number("(3.2)") == -3.2 and parse_number("—") == 0.0
    assert parse_number("Saltmere") is None and parse_number("1,250 fans") == 1250.0


amounts = st.decimals(min_value=-10**9, max_value=10**9, places=2, allow_nan=False, allow_infinity=False)


def _grouped(value: float, decimals: int) -> str:
    return f"{abs(value):,.{decimals}f}"


@given(amounts, st.sampled_from(["", "$", "€", "£", "¥"]), st.sampled_from(["", " "]), st.booleans(), st.integers(0, 2))
def test_written_amounts_read_back(amount, sign: str, space: str, brackets: bool, decimals: int) -> None:
    value = round(float(amount), decimals)
    body = _grouped(value, decimals)
    negative = value < 0
    written = (f"{sign}{space}({body})" if brackets else f"-{sign}{space}{body}") if negative else f"{sign}{space}{body}"
    quantity = read_quantity(written)
    assert quantity is not None, written
    assert quantity.value == pytest.approx(value) and quantity.unit == {"": "", "$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY"}[sign]
    assert parse_number(written) == pytest.approx(value)


@given(amounts, st.sampled_from([("%", "%"), (" %", "%"), (" percent", "%"), ("m", ""), (" million", ""), ("bn", ""), ("k", "")]))
def test_suffixes_keep_the_number_and_name_its_unit(amount, suffix: tuple[str, str]) -> None:
    written = f"{float(amount)}{suffix[0]}"
    quantity = read_quantity(written)
    assert quantity is not None and quantity.value == pytest.approx(float(amount))
    assert quantity.unit == suffix[1] and (quantity.scale != "") == (suffix[1] == "")


@given(st.text(max_size=30))
def test_any_text_reads_as_a_quantity_or_none_without_raising(text: str) -> None:
    quantity = read_quantity(text)
    assert quantity is None or isinstance(quantity.value, float)
    number = parse_number(text)
    assert number is None or isinstance(number, float)


@given(st.floats(min_value=-1e9, max_value=1e9, allow_nan=False))
def test_format_number_reads_back_within_its_rounding(value: float) -> None:
    written = format_number(value)
    assert parse_number(written) == pytest.approx(round(value, 2), abs=0.006)
    assert "e" not in written and not written.endswith(".")


@pytest.mark.parametrize(
    ("header", "unit"),
    [
        ("2019 €m", Unit("EUR", "million")),
        ("2018 £m", Unit("GBP", "million")),
        ("(in millions)", Unit("", "million")),
        ("Fiscal 2018 (in millions)", Unit("", "million")),
        ("$ in thousands", Unit("USD", "thousand")),
        ("December 31 2019 U.S. $ in thousands", Unit("USD", "thousand")),
        ("30 June 2019 $’000", Unit("USD", "thousand")),
        ("USDm", Unit("USD", "million")),
        ("$ million", Unit("USD", "million")),
        ("(Dollars in Millions)", Unit("USD", "million")),
        ("Number of Shares (thousands)", Unit("", "thousand")),
        ("Fiscal Year 2018 Net Sales", Unit()),
        ("Mobileye", Unit()),
        ("Commercial transportation", Unit()),
    ],
)
def test_the_unit_a_header_states(header: str, unit: Unit) -> None:
    assert table_unit(header) == unit


def test_years_of_column_names() -> None:
    assert is_year("2019") and not is_year("2,019") and not is_year("12") and not is_year("2019.0")
    assert year_of("2019 €m") == "2019" and year_of("Fiscal 2018 (in millions)") == "2018"
    assert year_of("Change (%)") == "" and year_of("2018 to 2019") == ""


@pytest.mark.parametrize(
    ("answer", "value", "expected"),
    [
        ("It grew 4.5%.", "4.5%", True),
        ("It grew 4.50 % in the year.", "4.5%", True),
        ("about 4.5 percent", "4.5%", True),
        ("It grew 45 percent.", "4.5%", False),
        ("It grew 4.5 points.", "4.5%", False),  # a percentage needs its sign or word
        ("Sales fell by 94 million.", "-94 million", True),
        ("Sales changed by 94 million.", "-94 million", False),
        ("-12.1%", "-12.14%", True),  # rounded to fewer decimals, at least one
        ("-12%", "-12.14%", False),
        ("$1,452.4 million", "$ 1,452.4", True),
    ],
)
def test_the_exact_check_reads_numbers_as_people_write_them(answer: str, value: str, expected: bool) -> None:
    assert contains_exact(answer, value) is expected
