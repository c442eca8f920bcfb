"""Writes evals/travel/dataset.json: 30 cases for a travel agent (flights, bookings, hotels).

    PYTHONPATH=. python evals/travel/build_dataset.py          # write it
    PYTHONPATH=. python evals/travel/build_dataset.py --check  # exit 1 if the file is not what this builds

A second domain beside ShopNest, written in the trajectory format
(docs/trajectory.md): eight tools declared with JSON-Schema parameters and
``writes``; expected calls with several arguments, optional ones, acceptable
values; reads before writes; parallel searches; a write that fails; another
customer's booking; multi-turn conversations; the final state; answers with
amounts and dates in any common form; the decision a question asks for.
The tool declarations are the agent's own (``examples/travel/world.py``), the
way a real agent publishes its tools.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from examples.travel.world import TOOLS

OUT = Path(__file__).with_name("dataset.json")
CASES: list[dict[str, Any]] = []

REFUND = {"yes": ["^yes", "is refundable"], "no": ["^no", "not refundable", "non-refundable"]}
STATUS = {"confirmed": ["is confirmed", "still active"], "cancelled": ["is cancelled", "already cancelled"]}
BOOKED = {"booked": ["^booked", "is booked"], "notBooked": ["did not book", "could not book", "sold out"]}
CANCEL = {"cancelled": ["^cancelled", "has been cancelled"], "notFound": ["could not find"],
          "alreadyCancelled": ["already cancelled"]}
EXISTING = [{"$has": {"id": "BK-1001"}}, {"$has": {"id": "BK-1002"}}, {"$has": {"id": "BK-1003"}}]


def money(amount: float) -> dict[str, Any]:
    return {"$money": {"amount": amount, "currency": "EUR"}}


def date(iso: str) -> dict[str, str]:
    return {"$date": iso}


def decision(expect: str, options: dict[str, list[str]], required: bool = True) -> dict[str, Any]:
    return {"expect": expect, "options": options, "required": required}


def call(tool: str, turn: int | None = None, status: list[str] | None = None, parallel: str | None = None,
         id: str | None = None, after: tuple[str, ...] = (), **arguments: Any) -> dict[str, Any]:
    return {"tool": tool, "arguments": arguments, **({"turn": turn} if turn else {}),
            **({"status": status} if status else {}), **({"parallel": parallel} if parallel else {}),
            **({"id": id} if id else {}), **({"after": list(after)} if after else {})}


def search(origin: str, destination: str, day: str, **more: Any) -> dict[str, Any]:
    turn, parallel, id = more.pop("turn", None), more.pop("parallel", None), more.pop("id", None)
    return call("search_flights", turn=turn, parallel=parallel, id=id, origin=origin, destination=destination, date=day,
                **more)


def case(id: str, question: str, golden: str, behaviour: str, *, category: str, calls: list[dict[str, Any]],
         answer: dict[str, Any] | None = None, state: dict[str, Any] | None = None, tags: tuple[str, ...] = (),
         **options: Any) -> None:
    expectations = {"expected": calls, **{k: options.pop(k) for k in ("count", "order", "others", "counted",
                                                                     "forbidden") if k in options}}
    data: dict[str, Any] = {"id": id, "question": question, "goldenAnswer": golden, "expectedBehaviour": behaviour,
                            "category": category, "calls": expectations}
    if answer:
        data["answer"] = answer
    if state:
        data["state"] = state
    if tags:
        data["tags"] = sorted(tags)
    data.update(options)
    CASES.append(data)


def searches() -> None:
    case("trv-search-01", "Which flights go from BER to LIS on 2026-05-01?",
         "The cheapest is LH102 at 18:40 for 95 EUR.", "One search with the route and date; no other call.",
         category="search", calls=[search("BER", "LIS", "2026-05-01")], count="exactly", others="none",
         answer={"include": ["LH102", money(95), date("2026-05-01")]})
    case("trv-search-02", "Find business class flights from BER to LIS on 2026-05-01 for 2 passengers.",
         "LH102 in business is 410 EUR per person, 820 EUR for both.",
         "Search with cabin and passenger count as their types (an integer 2, not '2').", category="search",
         calls=[search("BER", "LIS", "2026-05-01", cabin="business", passengers=2)],
         answer={"include": ["LH102", money(410), money(820)]})
    case("trv-search-03", "What is the cheapest economy flight from LHR to JFK on 2026-06-10?",
         "BA300 at 09:30 for 450 EUR.", "Economy is the default cabin: it may be given or left out.",
         category="search", calls=[search("LHR", "JFK", "2026-06-10", cabin={"$anyOf": ["economy"], "$optional": True})],
         answer={"include": ["BA300", money(450)]})
    case("trv-search-04", "Which flights go from CDG to FCO on 2026-07-01 in economy?",
         "AF400 is sold out; AF402 at 16:30 has seats for 95 EUR.", "Exactly one search; nothing else.",
         category="search", calls=[search("CDG", "FCO", "2026-07-01", cabin="economy")], count="exactly",
         others="none", answer={"include": ["AF402", money(95)]})
    case("trv-round-01", "I need flights from BER to LIS on 2026-05-01 and back on 2026-05-08.",
         "Out LH102 for 95 EUR, back TP202 for 89 EUR: 184 EUR per person.",
         "Search both legs in one model round (parallel calls).", category="search",
         calls=[search("BER", "LIS", "2026-05-01", parallel="legs"), search("LIS", "BER", "2026-05-08", parallel="legs")],
         count="exactly", answer={"include": ["LH102", "TP202", money(184)]}, tags=("parallel",))
    case("trv-round-02", "Show me flights from BER to LIS on 2026-05-02 and from LIS to BER on 2026-05-08 for 2 people.",
         "LH104 for 130 EUR and TP202 for 89 EUR: 219 EUR per person, 438 EUR for two.",
         "Both legs in one round, each for 2 passengers; the total is for both people.", category="search",
         calls=[search("BER", "LIS", "2026-05-02", passengers=2, parallel="legs"),
                search("LIS", "BER", "2026-05-08", passengers=2, parallel="legs")],
         answer={"include": ["LH104", "TP202", money(438)]}, tags=("parallel",))


def bookings() -> None:
    case("trv-book-01", "Book LH100 from BER to LIS on 2026-05-01 for Ana Silva, window seat, pay by card.",
         "Booked LH100 for Ana Silva, window seat: 120 EUR by card.",
         "Search first (read before the write), then book with every argument.", category="booking",
         calls=[search("BER", "LIS", "2026-05-01"),
                call("book_flight", flightId="LH100", passengers=["Ana Silva"], seat="window", payment="card")],
         order="inOrder", answer={"include": [money(120)], "decision": decision("booked", BOOKED)},
         state={"bookings": {"$contains": [{"$has": {"flightId": "LH100", "passengers": ["Ana Silva"], "seat": "window",
                                                      "payment": "card", "status": "confirmed"}}]}})
    case("trv-book-02", "Book LH100 from BER to LIS on 2026-05-01 in business class for Ana Silva and Ben Okafor, "
         "pay with points.", "Booked LH100 in business for both: 960 EUR in points.",
         "Check the points balance and the seats (either first), then book two passengers (any order) in business.",
         category="booking",
         calls=[call("get_customer", id="balance", customerId="C-1"),
                search("BER", "LIS", "2026-05-01", cabin="business", passengers=2, id="seats"),
                call("book_flight", after=("balance", "seats"), flightId="LH100",
                     passengers={"$unordered": ["Ana Silva", "Ben Okafor"]}, cabin="business", payment="points")],
         answer={"include": [money(960)], "decision": decision("booked", BOOKED)},
         state={"bookings": {"$contains": [{"$has": {"flightId": "LH100", "cabin": "business", "status": "confirmed",
                                                      "passengers": {"$unordered": ["Ana Silva", "Ben Okafor"]}}}]}})
    case("trv-book-03", "Book LH102 from BER to LIS on 2026-05-01 for Ben Okafor, aisle seat, pay with voucher.",
         "Not booked: the voucher balance is 0 EUR, the fare 95 EUR.",
         "Read the voucher balance; it is too low, so book nothing and say why.", category="booking",
         customerId="C-2", calls=[call("get_customer", customerId="C-2"), search("BER", "LIS", "2026-05-01")],
         answer={"include": [money(0)], "decision": decision("notBooked", BOOKED)},
         state={"bookings": [{"$has": {"id": "BK-2001"}}]})
    case("trv-book-04", "Book AF400 from CDG to FCO on 2026-07-01 for Ana Silva, pay by card.",
         "AF400 is sold out; AF402 has seats for 95 EUR.", "The search shows no seat: book nothing, offer AF402.",
         category="booking", calls=[search("CDG", "FCO", "2026-07-01")],
         answer={"include": ["AF402"], "decision": decision("notBooked", BOOKED)})
    case("trv-book-05", "Book LH102 from BER to LIS on 2026-05-01 for Ana Silva, pay by card.",
         "The booking system failed; nothing was booked or charged.",
         "The write fails (an injected server error): it was attempted with the right arguments, ended error, "
         "and the answer says nothing was booked.", category="booking", faults={"book_flight": "server_error"},
         calls=[search("BER", "LIS", "2026-05-01"),
                call("book_flight", status=["error"], flightId="LH102", passengers=["Ana Silva"], payment="card")],
         answer={"decision": decision("notBooked", BOOKED)}, state={"bookings": {"$unordered": EXISTING}},
         tags=("fault",))


def cancellations() -> None:
    case("trv-cancel-01", "Please cancel BK-1001.", "Cancelled BK-1001; 120 EUR go back to the card.",
         "Read the booking, then cancel it (the refund goes to the original payment, the default).",
         category="cancel", order="inOrder",
         calls=[call("get_booking", bookingId="BK-1001"), call("cancel_booking", bookingId="BK-1001")],
         answer={"include": [money(120)], "decision": decision("cancelled", CANCEL)},
         state={"bookings": {"$contains": [{"$has": {"id": "BK-1001", "status": "cancelled"}}]}})
    case("trv-cancel-02", "Cancel BK-1002 and put the money on a voucher.", "Cancelled BK-1002; a 450 EUR voucher.",
         "Read, then cancel with the refund to a voucher.", category="cancel", order="inOrder",
         calls=[call("get_booking", bookingId="BK-1002"), call("cancel_booking", bookingId="BK-1002", refundTo="voucher")],
         answer={"include": [money(450), "voucher"], "decision": decision("cancelled", CANCEL)},
         state={"bookings": {"$contains": [{"$has": {"id": "BK-1002", "status": "cancelled"}}]}})
    case("trv-cancel-03", "Cancel BK-2001.", "I could not find BK-2001 on your account.",
         "BK-2001 is another customer's: the lookup is denied; never even try to cancel it (attempts count).",
         category="cancel", counted="attempted",
         calls=[call("get_booking", status=["denied"], bookingId="BK-2001")],
         forbidden=[{"tool": "cancel_booking", "arguments": {"bookingId": "BK-2001"}}],
         answer={"exclude": ["TP200", "Ben Okafor"], "decision": decision("notFound", CANCEL)}, tags=("permission",))
    case("trv-cancel-04", "Cancel BK-1003.", "BK-1003 is already cancelled.",
         "Read the booking: it is cancelled already, so write nothing.", category="cancel",
         calls=[call("get_booking", bookingId="BK-1003")],
         answer={"decision": decision("alreadyCancelled", CANCEL)})


def questions() -> None:
    case("trv-refund-01", "Is BK-1001 refundable?", "Yes: cancelling returns 120 EUR to the card.",
         "Read the fare; answer yes; change nothing.", category="refund",
         calls=[call("get_booking", bookingId="BK-1001")],
         answer={"include": [money(120)], "decision": decision("yes", REFUND)})
    case("trv-refund-02", "Can I get my money back if I cancel BK-1002?",
         "No: BK-1002 is a basic fare; cancelling would only give a 450 EUR voucher.",
         "A question, not an instruction: read, answer no, cancel nothing.", category="refund",
         calls=[call("get_booking", bookingId="BK-1002")], answer={"decision": decision("no", REFUND)},
         state={"bookings": {"$contains": [{"$has": {"id": "BK-1002", "status": "confirmed"}}]}})
    case("trv-refund-03", "If I cancel BK-1001, will I be refunded?", "Yes, 120 EUR back to the card.",
         "A question: read, answer yes, cancel nothing.", category="refund",
         calls=[call("get_booking", bookingId="BK-1001")], answer={"decision": decision("yes", REFUND)},
         state={"bookings": {"$contains": [{"$has": {"id": "BK-1001", "status": "confirmed"}}]}})
    case("trv-change-01", "Change BK-1001 to LH102.", "Changed BK-1001 to LH102 on 1 May 2026; no fee.",
         "Read the booking before changing it.", category="change",
         calls=[call("get_booking", id="read", bookingId="BK-1001"),
                call("change_flight", after=("read",), bookingId="BK-1001", newFlightId="LH102")],
         answer={"include": [date("2026-05-01"), money(0)]},
         state={"bookings": {"$contains": [{"$has": {"id": "BK-1001", "flightId": "LH102"}}]}})
    case("trv-change-02", "How much does it cost to change BK-1002?", "75 EUR.",
         "Read the fare rules; change nothing.", category="change", calls=[call("get_booking", bookingId="BK-1002")],
         answer={"include": [money(75)]})
    case("trv-status-01", "What is the status of BK-1001?", "Confirmed: LH100 on 1 May 2026 at 07:10.",
         "Read the booking; the date in any common form.", category="status",
         calls=[call("get_booking", bookingId="BK-1001")],
         answer={"include": ["LH100", date("2026-05-01")], "decision": decision("confirmed", STATUS)})
    case("trv-status-02", "Is BK-1003 still active?", "No, BK-1003 is cancelled.", "Read the booking.",
         category="status", calls=[call("get_booking", bookingId="BK-1003")],
         answer={"decision": decision("cancelled", STATUS)})
    case("trv-oos-01", "What is the capital of Portugal?", "I can only help with flights, bookings and hotels.",
         "Out of scope: no call at all.", category="out-of-scope", split="unanswerable", calls=[], others="none",
         answer={"include": ["only help with"]})


def hotels() -> None:
    case("trv-hotel-01", "Find a hotel in Lisbon from 2026-05-01 for 7 nights under 120 EUR per night.",
         "Casa Alfama at 95 EUR per night, 665 EUR in total.",
         "Search with the price limit; the city compared without case.", category="hotel",
         calls=[call("search_hotels", city={"$eq": "lisbon", "$normalize": ["case"]}, checkIn="2026-05-01", nights=7,
                     maxPrice=120)],
         answer={"include": ["Casa Alfama", money(665)]})
    case("trv-hotel-02", "Book Casa Alfama in Lisbon from 2026-05-01 for 7 nights for 2 guests with breakfast.",
         "Reserved Casa Alfama for 7 nights, 2 guests, breakfast: 665 EUR.", "Search, then book once.",
         category="hotel", order="inOrder",
         calls=[call("search_hotels", city="Lisbon", checkIn="2026-05-01", nights=7),
                call("book_hotel", hotelId="H-LIS-1", checkIn="2026-05-01", nights=7, guests=2, breakfast=True)],
         answer={"include": [money(665)]},
         state={"hotelStays": {"$unordered": [{"$has": {"hotelId": "H-LIS-1", "nights": 7, "guests": 2,
                                                         "breakfast": True}}]}})
    case("trv-hotel-03", "Book Hotel Tejo in Lisbon from 2026-05-08 for 2 nights.",
         "Reserved Hotel Tejo for 2 nights: 280 EUR.",
         "Guests and breakfast are not asked for: left out or given as their defaults (1, false).",
         category="hotel", calls=[call("search_hotels", city="Lisbon", checkIn="2026-05-08", nights=2),
                                  call("book_hotel", hotelId="H-LIS-2", checkIn="2026-05-08", nights=2)],
         answer={"include": [money(280)]},
         state={"hotelStays": {"$unordered": [{"$has": {"hotelId": "H-LIS-2", "nights": 2}}]}})


def conversations() -> None:
    mt = ("multi-turn",)
    case("trv-mt-01", "Find flights from BER to LIS on 2026-05-01.", "Booked LH102 for Ana Silva: 95 EUR.",
         "Search after the first message; book the cheapest flight after the second.", category="booking",
         followUps=["Book the cheapest one for Ana Silva, pay by card."], tags=mt,
         calls=[search("BER", "LIS", "2026-05-01", turn=1),
                call("book_flight", turn=2, flightId="LH102", passengers=["Ana Silva"], payment="card")],
         answer={"include": [money(95)], "decision": decision("booked", BOOKED)},
         state={"bookings": {"$contains": [{"$has": {"flightId": "LH102", "status": "confirmed"}}]}})
    case("trv-mt-02", "What is the status of BK-1001?", "Confirmed; then cancelled on request.",
         "Read after the first message; cancel only after the second.", category="cancel",
         followUps=["Cancel it, please."], tags=mt,
         calls=[call("get_booking", turn=1, bookingId="BK-1001"), call("cancel_booking", turn=2, bookingId="BK-1001")],
         answer={"turn": 1, "decision": decision("confirmed", STATUS)},
         state={"bookings": {"$contains": [{"$has": {"id": "BK-1001", "status": "cancelled"}}]}})
    case("trv-mt-03", "Can I get my money back if I cancel BK-1002?", "No (basic fare). Hudson Rooms: 780 EUR.",
         "Answer the refund question without cancelling; then search hotels. No write in the whole conversation.",
         category="refund", followUps=["Then keep it. Find a hotel in New York from 2026-06-10 for 3 nights."],
         tags=mt, calls=[call("get_booking", turn=1, bookingId="BK-1002"),
                         call("search_hotels", turn=2, city="New York", checkIn="2026-06-10", nights=3)],
         answer={"turn": 1, "decision": decision("no", REFUND)},
         state={"bookings": {"$contains": [{"$has": {"id": "BK-1002", "status": "confirmed"}}]}})
    case("trv-mt-04", "Find a hotel in Lisbon from 2026-05-08 for 2 nights.",
         "Reserved Casa Alfama with breakfast: 190 EUR.", "Search, then book the cheapest once with breakfast.",
         category="hotel", followUps=["Book the cheapest one with breakfast."], tags=mt,
         calls=[call("search_hotels", turn=1, city="Lisbon", checkIn="2026-05-08", nights=2),
                call("book_hotel", turn=2, hotelId="H-LIS-1", checkIn="2026-05-08", nights=2, breakfast=True)],
         answer={"include": [money(190)]},
         state={"hotelStays": {"$unordered": [{"$has": {"hotelId": "H-LIS-1", "breakfast": True}}]}})


def build() -> dict[str, Any]:
    CASES.clear()
    for part in (searches, bookings, cancellations, questions, hotels, conversations):
        part()
    return {"name": "travel", "description": "A travel agent: flights, bookings, hotels (tracegrade example).",
            "tools": TOOLS, "cases": list(CASES)}


def render(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 unless the file equals what this builds")
    args = parser.parse_args(argv)
    text = render(build())
    if args.check:
        same = OUT.exists() and OUT.read_text(encoding="utf-8") == text
        print(f"{OUT}: {'up to date' if same else 'differs from build_dataset.py'}")
        return 0 if same else 1
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}: {len(CASES)} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
