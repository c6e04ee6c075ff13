"""Two registered tools and one decorated tool, with branches and exception handlers."""

from dataclasses import dataclass


def tool(function):
    return function


@dataclass
class OrderLookup:
    order_id: str
    email: str


class RefundRequest(OrderLookup):
    amount: float


def find_order(store, args: OrderLookup):
    if not args.order_id:
        return {"error": "no order id"}
    try:
        return store[args.order_id]
    except KeyError:
        return {"error": "unknown order"}


def refund(store, args: RefundRequest):
    order = find_order(store, args)
    if "error" in order:
        return order
    elif args.amount > order["total"]:
        return {"error": "too much"}
    return {"refunded": args.amount}


@tool
def shipping_status(tracking_number: str, carrier: str = "post") -> str:
    return "in transit" if tracking_number else "unknown"


TOOLS = {"find_order": find_order, "refund": refund}
