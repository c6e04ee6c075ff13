"""The order desk's tools: a JSON-Schema parameter spec (from a pydantic model), an implementation that runs on any
SQLite copy of the four tables, and for a data-changing tool its effect as the workflow manifest states it.

`apply(tool, arguments, connection)` is the one entry point; a request the policies refuse returns `{"error": ...}`
and changes nothing. Each data-changing tool keeps its policy checks apart from its effect:
`apply(..., enforce_policy=False)` skips them (the customer is still verified and the track must exist), as an
agent that ignores the policies would.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from pydantic import Field

from bddgen.manifest.workflow import ArgumentSource, ToolEffect
from bddgen.reference.tools import ReferenceTool, ToolArguments, run_tool
from bddgen.reference.order_desk.database import invoice_day, today

# Not settings: the store's policy (policies/orders_and_refunds.md), which the reference agent enforces.
REFUND_DAYS = 30
INTERNATIONAL_PREFIX = "+"
PHONE_EXAMPLES = ("+44 20 7946 0321", "020 7946 0321")
"""New phone numbers an outcome task tries (the schema's examples): one in international format, one not."""


class Account(ToolArguments):
    email: str = Field(min_length=3, examples=["ilse.marwood@mailfern.test"], description="Email address on the customer's account")
    last_name: str = Field(min_length=1, examples=["Marwood"], description="Last name on the account, for verification")


class PlaceOrder(Account):
    track: str = Field(min_length=1, examples=["The Salt Road"], description="Name of the track to buy")


class RefundInvoice(Account):
    invoice_id: int = Field(gt=0, description="Number of the invoice to refund")


class UpdatePhone(Account):
    new_phone: str = Field(min_length=3, examples=list(PHONE_EXAMPLES), description="The new phone number")


def _customer(connection: sqlite3.Connection, args: Account) -> sqlite3.Row | dict[str, str]:
    """The customer row when email and last name match, else an error result (naming no one)."""
    row = connection.execute('SELECT * FROM "Customer" WHERE lower("Email") = lower(?)', (args.email.strip(),)).fetchone()
    if row is None or row["LastName"].strip().casefold() != args.last_name.strip().casefold():
        return {"error": "no account matches this email address and last name"}
    return row


def find_invoices(connection: sqlite3.Connection, args: Account) -> dict[str, Any]:
    customer = _customer(connection, args)
    if isinstance(customer, dict):
        return customer
    rows = connection.execute(
        'SELECT "InvoiceId", substr("InvoiceDate", 1, 10) AS "InvoiceDate", "Total" FROM "Invoice" WHERE "CustomerId" = ? '
        'ORDER BY "InvoiceDate"',
        (customer["CustomerId"],),
    ).fetchall()
    return {"invoices": [dict(row) for row in rows]}


def _next_id(connection: sqlite3.Connection, table: str, column: str) -> int:
    return int(connection.execute(f'SELECT coalesce(max(CAST("{column}" AS INTEGER)), 0) FROM "{table}"').fetchone()[0]) + 1


def place_order(connection: sqlite3.Connection, args: PlaceOrder, enforce_policy: bool = True) -> dict[str, Any]:
    customer = _customer(connection, args)
    if isinstance(customer, dict):
        return customer
    tracks = connection.execute('SELECT * FROM "Track" WHERE lower("Name") = lower(?)', (args.track.strip(),)).fetchall()
    if len(tracks) != 1:
        return {"error": f"{'no track' if not tracks else 'several tracks'} named {args.track!r}; give the exact name of one track"}
    track = tracks[0]
    bought = connection.execute(
        'SELECT 1 FROM "InvoiceLine" JOIN "Invoice" USING ("InvoiceId") WHERE "CustomerId" = ? AND "TrackId" = ?',
        (customer["CustomerId"], track["TrackId"]),
    ).fetchone()
    if enforce_policy and bought is not None:
        return {"error": f"{track['Name']!r} was bought already; a customer can buy each track only once"}
    invoice = _next_id(connection, "Invoice", "InvoiceId")
    with connection:
        connection.execute(
            'INSERT INTO "Invoice" ("InvoiceId", "CustomerId", "InvoiceDate", "BillingAddress", "BillingCity", "BillingState", '
            '"BillingCountry", "BillingPostalCode", "Total") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
            (
                str(invoice), customer["CustomerId"], f"{today(connection).isoformat()} 00:00:00", customer["Address"], customer["City"],
                customer["State"], customer["Country"], customer["PostalCode"], track["UnitPrice"],
            ),
        )
        connection.execute(
            'INSERT INTO "InvoiceLine" ("InvoiceLineId", "InvoiceId", "TrackId", "UnitPrice", "Quantity") VALUES (?, ?, ?, ?, ?)',
            (str(_next_id(connection, "InvoiceLine", "InvoiceLineId")), str(invoice), track["TrackId"], track["UnitPrice"], "1"),
        )
    return {"invoice_id": invoice, "track": track["Name"], "total": track["UnitPrice"]}


def refund_invoice(connection: sqlite3.Connection, args: RefundInvoice, enforce_policy: bool = True) -> dict[str, Any]:
    customer = _customer(connection, args)
    if isinstance(customer, dict):
        return customer
    invoice = connection.execute(
        'SELECT * FROM "Invoice" WHERE CAST("InvoiceId" AS INTEGER) = ? AND "CustomerId" = ?', (args.invoice_id, customer["CustomerId"])
    ).fetchone()
    if invoice is None:
        return {"error": f"this account has no invoice {args.invoice_id}"}
    age = (today(connection) - invoice_day(invoice["InvoiceDate"])).days
    if enforce_policy and age > REFUND_DAYS:
        return {"error": f"invoice {args.invoice_id} is {age} days old; invoices older than {REFUND_DAYS} days cannot be refunded"}
    with connection:
        connection.execute('DELETE FROM "InvoiceLine" WHERE "InvoiceId" = ?', (invoice["InvoiceId"],))
        connection.execute('DELETE FROM "Invoice" WHERE "InvoiceId" = ?', (invoice["InvoiceId"],))
    return {"invoice_id": args.invoice_id, "refunded": invoice["Total"]}


def update_phone(connection: sqlite3.Connection, args: UpdatePhone, enforce_policy: bool = True) -> dict[str, Any]:
    customer = _customer(connection, args)
    if isinstance(customer, dict):
        return customer
    phone = args.new_phone.strip()
    if enforce_policy and not phone.startswith(INTERNATIONAL_PREFIX):
        return {"error": f"{phone!r} is not in international format; a phone number must start with + and the country code"}
    with connection:
        connection.execute('UPDATE "Customer" SET "Phone" = ? WHERE "CustomerId" = ?', (phone, customer["CustomerId"]))
    return {"phone": phone}


def _account(prefix: str) -> dict[str, ArgumentSource]:
    """How a customer is verified: the email address and the last name on the account (columns of `prefix`)."""
    return {"email": ArgumentSource(column=f"{prefix}Email"), "last_name": ArgumentSource(column=f"{prefix}LastName")}


TOOLS: dict[str, ReferenceTool] = {
    tool.name: tool
    for tool in (
        ReferenceTool("find_invoices", "A verified customer's invoices with their dates and totals.", Account, find_invoices),
        ReferenceTool(
            "place_order", "Sell one track to a verified customer on a new invoice, at its unit price.", PlaceOrder, place_order,
            ToolEffect(
                acts_on="Customer", writes=["Invoice", "InvoiceLine"], persona=["FirstName", "LastName"],
                arguments={**_account(""), "track": ArgumentSource(choose="Track.Name", says="the track {you} want to buy is {value}")},
                goal="buy the track {track}", will_not_accept="a different track",
            ),
        ),
        ReferenceTool(
            "refund_invoice", "Refund a verified customer's invoice, removing it with its lines.", RefundInvoice, refund_invoice,
            ToolEffect(
                acts_on="Invoice", writes=["Invoice", "InvoiceLine"], persona=["Customer.FirstName", "Customer.LastName"],
                arguments={
                    **_account("Customer."),
                    "invoice_id": ArgumentSource(column="InvoiceId", says="the invoice {you} want refunded is number {value}"),
                },
                goal="refund your invoice {invoice_id}", will_not_accept="anything less than a refund of the whole invoice",
            ),
        ),
        ReferenceTool(
            "update_phone", "Change the phone number on a verified customer's account.", UpdatePhone, update_phone,
            ToolEffect(
                acts_on="Customer", writes=["Customer"], persona=["FirstName", "LastName"],
                arguments={**_account(""), "new_phone": ArgumentSource(says="the new phone number {you} want on your account is {value}")},
                goal="update the phone number on your account to {new_phone}", will_not_accept="a different phone number",
            ),
        ),
    )
}


def apply(tool: str, arguments: dict[str, Any], connection: sqlite3.Connection, *, enforce_policy: bool = True) -> dict[str, Any]:
    """Run `tool` with `arguments` on `connection` (a copy of the four tables); a data-changing tool skips its policy
    checks when `enforce_policy` is False. KeyError for an unknown tool, ToolArgumentError for arguments outside its schema."""
    return run_tool(TOOLS, tool, arguments, connection, enforce_policy=enforce_policy)
