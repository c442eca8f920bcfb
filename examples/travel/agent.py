"""A scripted travel agent: reads the request, calls the travel tools, answers
from their results, and reports its trace and final state.

    PYTHONPATH=. tracegrade run evals/travel/dataset.json --target examples.travel.agent:scripted --checks-only
    PYTHONPATH=. tracegrade run evals/travel/dataset.json --target examples.travel.agent:broken --checks-only

No model: the plan comes from rules over the request, so the example runs
anywhere in milliseconds and every trace is reproducible. ``broken`` is the
same agent with the flaws in ``FLAWS`` switched on, each a mistake real agents
make (a number sent as text, a forgotten argument, acting on a question, ...);
the dataset must catch each one for the right, named reason.

A conversation's turns share one world: the agent keys it by the case id and
starts it afresh on a case's first message (tracegrade plays a case's
follow-ups one message at a time).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from examples.travel.world import CUSTOMERS, FLIGHTS, HOTELS, World
from tracegrade import GoldenCase, Reply, ToolCall

FLAWS = {
    "passengers_as_text": "sends the passenger count of a search as text ('2')",
    "forgets_card": "leaves out payment when the customer pays by card",
    "hotel_currency": "adds a currency argument the hotel search does not have",
    "acts_on_questions": "cancels a booking when the customer only asks whether a refund is possible",
    "always_refundable": "says every fare is refundable",
    "retries_hotel": "books a hotel twice (retries after success)",
    "writes_first": "changes a flight before reading the booking",
    "sequential_searches": "searches the two legs of a round trip one after the other, not in one round",
    "per_person_total": "gives the per-person price as the total for several passengers",
    "capital_cabin": "writes the cabin capitalised ('Business')",
    "first_result": "books the first flight of a search, not the cheapest one asked for",
    "skips_lookup": "cancels without reading the booking first",
}

_WORLDS: dict[str, World] = {}
_AIRPORT = re.compile(r"\b(BER|LIS|LHR|JFK|CDG|FCO)\b")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_BOOKING = re.compile(r"\bBK-\d{4}\b")
_FLIGHT = re.compile(r"\b[A-Z]{2}\d{3}\b")


def _day(iso: str) -> str:
    """Dates the way a person writes them (1 May 2026); the checks read any common form."""
    date = dt.date.fromisoformat(iso)
    return f"{date.day} {date.strftime('%B')} {date.year}"


@dataclass
class Turn:
    """One request's work: the calls made (with their model round) and the world they act on."""

    world: World
    flaws: frozenset[str]
    calls: list[ToolCall] = field(default_factory=list)
    round: int = 0

    def step(self, *requests: tuple[str, dict[str, Any]]) -> list[tuple[str, str]]:
        """One model round: the tools it asks for, in parallel when there are several."""
        results = []
        for tool, arguments in requests:
            result, status = self.world.call(tool, arguments)
            first = next(iter(arguments.values()), None)
            self.calls.append(ToolCall(name=tool, arguments=arguments, result=result, status=status,
                                       argument=first if isinstance(first, str) else None, round=self.round))
            results.append((result, status))
        self.round += 1
        return results

    def one(self, tool: str, arguments: dict[str, Any]) -> tuple[str, str]:
        return self.step((tool, arguments))[0]

    def has(self, flaw: str) -> bool:
        return flaw in self.flaws


# --- the flows ---------------------------------------------------------------------


def _search_args(t: Turn, origin: str, destination: str, date: str, cabin: str | None, passengers: int) -> dict[str, Any]:
    args: dict[str, Any] = {"origin": origin, "destination": destination, "date": date}
    if cabin:
        args["cabin"] = cabin.capitalize() if t.has("capital_cabin") else cabin
    if passengers > 1:
        args["passengers"] = str(passengers) if t.has("passengers_as_text") else passengers
    return args


def _cheapest(result: str) -> tuple[str, str, int, int] | None:
    """(flight, departure, price, seats) of the cheapest flight with seats, from a search result."""
    rows = re.findall(r"(\w{2}\d{3}) (\d\d:\d\d) (\d+) EUR seats (\d+)", result)
    open_rows = [(int(p), f, d, int(s)) for f, d, p, s in rows if int(s) > 0]
    if not open_rows:
        return None
    price, flight, departure, seats = min(open_rows)
    return flight, departure, price, seats


def _total(t: Turn, per_person: int, passengers: int) -> int:
    return per_person if t.has("per_person_total") else per_person * passengers


def search(t: Turn, text: str) -> str:
    airports, dates = _AIRPORT.findall(text), _DATE.findall(text)
    cabin, passengers = _cabin(text), _passengers(text)
    legs = [(airports[0], airports[1], dates[0])]
    if len(dates) > 1:  # a round trip: the way back, on the second date
        back = (airports[2], airports[3]) if len(airports) >= 4 else (airports[1], airports[0])
        legs.append((*back, dates[1]))
    requests = [("search_flights", _search_args(t, o, d, day, cabin, passengers)) for o, d, day in legs]
    results = ([r for req in requests for r in t.step(req)] if t.has("sequential_searches")
               else t.step(*requests))
    parts, per_person = [], 0
    for (origin, destination, day), (result, _) in zip(legs, results):
        best = _cheapest(result)
        if best is None:
            parts.append(f"No flight from {origin} to {destination} on {_day(day)} has seats.")
            continue
        flight, departure, price, seats = best
        per_person += price
        parts.append(f"The cheapest flight from {origin} to {destination} on {_day(day)} is {flight} at "
                     f"{departure} for {price} EUR per person ({seats} seats left).")
    if len(legs) > 1:
        parts.append(f"Together {per_person} EUR per person.")
    if passengers > 1:
        parts.append(f"For {passengers} passengers that is {_total(t, per_person, passengers)} EUR in total.")
    return " ".join(parts)


def book(t: Turn, text: str, context: str) -> str:
    names = _names(text) or [CUSTOMERS[t.world.customer]["name"]]
    flight = (_FLIGHT.findall(text) or [None])[0]
    cheapest_asked = "cheapest" in text.casefold()
    if flight is None or cheapest_asked:  # a follow-up: the route and date come from the conversation
        text_for_route = context + " " + text
    else:
        text_for_route = text
    origin, destination = _AIRPORT.findall(text_for_route)[:2]
    date = _DATE.findall(text_for_route)[0]
    cabin, payment, seat = _cabin(text), _payment(text), _seat(text)
    if payment in ("voucher", "points"):
        profile, _ = t.one("get_customer", {"customerId": t.world.customer})
        balance = int(re.search(rf"{payment} (\d+)", profile).group(1))
    result, _ = t.one("search_flights", _search_args(t, origin, destination, date, cabin, len(names)))
    offers = re.findall(r"(\w{2}\d{3}) (\d\d:\d\d) (\d+) EUR seats (\d+)", result)
    if cheapest_asked:
        best = _cheapest(result)
        flight = (offers[0][0] if t.has("first_result") else best[0]) if best else None
    offer = next(((d, int(p), int(s)) for f, d, p, s in offers if f == flight), None)
    if offer is None or offer[2] < len(names):
        alternative = _cheapest(result)
        other = f" {alternative[0]} at {alternative[1]} has seats for {alternative[2]} EUR." if alternative else ""
        return f"{flight} is sold out on {_day(date)}, so I did not book it.{other}"
    total = offer[1] * len(names)
    if payment == "voucher" and balance < total:
        return (f"I could not book {flight}: your voucher balance is {balance} EUR and the fare is {total} EUR. "
                "Shall I pay by card or with points instead?")
    args: dict[str, Any] = {"flightId": flight, "passengers": names}
    if cabin:
        args["cabin"] = cabin.capitalize() if t.has("capital_cabin") else cabin
    if seat:
        args["seat"] = seat
    if not (payment == "card" and t.has("forgets_card")):
        args["payment"] = payment
    result, status = t.one("book_flight", args)
    if status != "ok":
        return (f"I could not book {flight}: the booking system returned an error. Nothing was charged; "
                "please try again later.")
    booking = re.search(r"BK-\d+", result).group()
    extras = ", ".join(x for x in (cabin or "economy", f"{seat} seat" if seat else "") if x)
    return (f"Booked {flight} on {_day(date)} for {' and '.join(names)} ({extras}): booking {booking}, "
            f"total {_total(t, offer[1], len(names))} EUR, paid by {payment}.")


def booking_question(t: Turn, text: str, booking: str) -> str:
    lowered = text.casefold()
    if any(w in lowered for w in ("refund", "money back")):
        details, _ = t.one("get_booking", {"bookingId": booking})
        if t.has("acts_on_questions") and "cancel" in lowered:
            t.one("cancel_booking", {"bookingId": booking, "refundTo": "voucher"})
        price = re.search(r"price (\d+) EUR", details).group(1)
        if "refundable true" in details or t.has("always_refundable"):
            return f"Yes, {booking} is refundable: cancelling returns {price} EUR to your original payment method."
        return (f"No, {booking} is a basic fare and is not refundable; cancelling would only give you a voucher "
                f"of {price} EUR.")
    details, status = t.one("get_booking", {"bookingId": booking})
    if status != "ok" or details == "Booking not found":
        return f"I could not find {booking} on your account."
    if "cost" in lowered or "fee" in lowered:
        fee = re.search(r"change_fee (\d+) EUR", details).group(1)
        return f"Changing {booking} costs a fee of {fee} EUR."
    state, flight, route, day, departure = details.split()[1:6]
    if state == "cancelled":
        return f"{booking} is cancelled; it was {flight} on {_day(day)}."
    return f"{booking} is confirmed: {flight} from {route.replace('-', ' to ')} on {_day(day)} at {departure}."


def cancel(t: Turn, text: str, booking: str) -> str:
    if not t.has("skips_lookup"):
        details, status = t.one("get_booking", {"bookingId": booking})
        if status != "ok" or details == "Booking not found":
            return f"I could not find {booking} on your account."
        if details.split()[1] == "cancelled":
            return f"{booking} is already cancelled; nothing to do."
        refundable = "refundable true" in details
    else:
        refundable = True
    voucher = "voucher" in text.casefold() or not refundable
    # WHY the explicit default: a real agent often spells it out; it is the same call.
    result, status = t.one("cancel_booking", {"bookingId": booking, "refundTo": "voucher" if voucher else "original"})
    if status != "ok":
        return f"I could not cancel {booking}: {result}"
    amount = re.search(r"(\d+) EUR", result).group(1)
    where = f"You get a voucher of {amount} EUR." if voucher else f"{amount} EUR go back to your original payment method."
    return f"Cancelled {booking}. {where}"


def change(t: Turn, booking: str, flight: str) -> str:
    if t.has("writes_first"):
        result, status = t.one("change_flight", {"bookingId": booking, "newFlightId": flight})
        t.one("get_booking", {"bookingId": booking})
    else:
        details, status = t.one("get_booking", {"bookingId": booking})
        if status != "ok" or details == "Booking not found":
            return f"I could not find {booking} on your account."
        result, status = t.one("change_flight", {"bookingId": booking, "newFlightId": flight})
    if status != "ok":
        return f"I could not change {booking}: {result}"
    _, _, day, departure, _, _ = FLIGHTS[flight]
    fee = re.search(r"fee (\d+) EUR", result).group(1)
    return f"Changed {booking} to {flight} ({_day(day)}, {departure}). The change fee is {fee} EUR."


def hotel(t: Turn, text: str, context: str) -> str:
    lowered = text.casefold()
    where = text if "hotel in" in lowered or any(h[1] in text for h in HOTELS.values()) else context + " " + text
    city = next(town for _, town, _ in HOTELS.values() if town in where)
    check_in = _DATE.findall(where)[0]
    nights = int(re.search(r"(\d+) nights?", where).group(1))
    args: dict[str, Any] = {"city": city, "checkIn": check_in, "nights": nights}
    limit = re.search(r"under (\d+)", text)
    if limit:
        args["maxPrice"] = int(limit.group(1))
    if t.has("hotel_currency"):
        args["currency"] = "EUR"
    result, _ = t.one("search_hotels", args)
    offers = re.findall(r"(H-[A-Z]+-\d) ([\w ]+?) (\d+) EUR/night", result)
    if not offers:
        return f"I found no hotel in {city} for those dates."
    if "book" not in lowered:
        hid, name, price = offers[0]
        return (f"The cheapest hotel in {city} from {_day(check_in)} for {nights} nights is {name} at {price} EUR "
                f"per night, {int(price) * nights} EUR in total.")
    hid, name, price = next((o for o in offers if o[1] in text), offers[0])
    guests = re.search(r"(\d+) guests", text)
    reservation = {"hotelId": hid, "checkIn": check_in, "nights": nights,
                   **({"guests": int(guests.group(1))} if guests else {}),
                   "breakfast": "breakfast" in lowered}  # WHY explicit even when false: the default, the same call
    result, status = t.one("book_hotel", reservation)
    if t.has("retries_hotel"):
        t.one("book_hotel", reservation)
    if status != "ok":
        return f"I could not reserve {name}: {result}"
    stay = re.search(r"HR-\d+", result).group()
    board = " with breakfast" if reservation["breakfast"] else ""
    people = f" for {guests.group(1)} guests" if guests else ""
    return (f"Reserved {name} from {_day(check_in)} for {nights} nights{people}{board}: reservation {stay}, "
            f"{int(price) * nights} EUR.")


# --- reading the request -------------------------------------------------------------


def _cabin(text: str) -> str | None:
    return next((c for c in ("business", "premium", "economy") if c in text.casefold()), None)


def _seat(text: str) -> str | None:
    return next((s for s in ("window", "aisle", "middle") if f"{s} seat" in text.casefold()), None)


def _payment(text: str) -> str:
    lowered = text.casefold()
    return "points" if "points" in lowered else "voucher" if "voucher" in lowered else "card"


def _names(text: str) -> list[str]:
    known = [c["name"] for c in CUSTOMERS.values()] + ["Cleo Diaz"]
    return sorted((n for n in known if n in text), key=text.index)


def _passengers(text: str) -> int:
    count = re.search(r"for (\d+) (?:passengers|people)", text)
    return int(count.group(1)) if count else max(1, len(_names(text)))


def respond(t: Turn, text: str, context: str) -> str:
    """The plan: which flow the request asks for, read from its words."""
    lowered = text.casefold()
    bookings = _BOOKING.findall(text) or _BOOKING.findall(context)[-1:]
    hotel_talk = "hotel" in context.casefold() and not _AIRPORT.findall(text)  # "book the cheapest one"
    if "hotel" in lowered or any(name.casefold() in lowered for name, _, _ in HOTELS.values()) or hotel_talk:
        return hotel(t, text, context)
    if bookings and any(w in lowered for w in ("change", "move")) and _FLIGHT.findall(text) and "cost" not in lowered:
        return change(t, bookings[0], _FLIGHT.findall(text)[-1])
    if bookings and "cancel" in lowered and not _is_question(text):
        return cancel(t, text, bookings[0])
    if bookings:
        return booking_question(t, text, bookings[0])
    if "book" in lowered:
        return book(t, text, context)
    if len(_AIRPORT.findall(text)) >= 2 and _DATE.findall(text):
        return search(t, text)
    return "I can only help with flights, bookings and hotels."


def _is_question(text: str) -> bool:
    return text.rstrip().endswith("?") or text.split()[0].casefold() in ("can", "is", "if", "will", "would", "how")


def make_agent(flaws: frozenset[str]) -> Callable[[GoldenCase], Reply]:
    """The agent as a tracegrade target: a case in, a Reply with trace and state out."""
    unknown = flaws - FLAWS.keys()
    if unknown:
        raise ValueError(f"unknown flaws: {sorted(unknown)}")

    def agent(case: GoldenCase) -> Reply:
        if not case.history or case.id not in _WORLDS:
            _WORLDS[case.id] = World(customer=case.customer_id or "C-1", faults=dict(case.faults))
        turn = Turn(_WORLDS[case.id], flaws)
        context = " ".join(h.content for h in case.history)
        answer = respond(turn, case.question, context)
        return Reply(answer=answer, tool_calls=tuple(turn.calls), state=turn.world.state(), model="scripted-travel")

    return agent


scripted = make_agent(frozenset())
broken = make_agent(frozenset(FLAWS))
