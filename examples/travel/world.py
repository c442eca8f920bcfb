"""The travel example's world: customers, flights, bookings, hotels, and the
eight tools an agent calls on them (four reads, four writes).

Every tool returns ``(result text, status)`` the way a real tool reports to
the trace: ``ok``, ``error`` (failed or refused by the system) or ``denied``
(the record belongs to another customer).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

TODAY = "2026-04-20"

CUSTOMERS = {
    "C-1": {"name": "Ana Silva", "tier": "gold", "voucher": 200, "points": 50000},
    "C-2": {"name": "Ben Okafor", "tier": "basic", "voucher": 0, "points": 0},
}

# id: origin, destination, date, departure, price per cabin (EUR), seats left
FLIGHTS = {
    "LH100": ("BER", "LIS", "2026-05-01", "07:10", {"economy": 120, "premium": 260, "business": 480}, 9),
    "LH102": ("BER", "LIS", "2026-05-01", "18:40", {"economy": 95, "business": 410}, 4),
    "LH104": ("BER", "LIS", "2026-05-02", "07:10", {"economy": 130}, 9),
    "TP200": ("LIS", "BER", "2026-05-08", "12:00", {"economy": 110, "business": 450}, 9),
    "TP202": ("LIS", "BER", "2026-05-08", "20:15", {"economy": 89}, 2),
    "BA300": ("LHR", "JFK", "2026-06-10", "09:30", {"economy": 450, "premium": 900, "business": 2100}, 9),
    "AF400": ("CDG", "FCO", "2026-07-01", "08:00", {"economy": 80}, 0),
    "AF402": ("CDG", "FCO", "2026-07-01", "16:30", {"economy": 95}, 5),
}

FARES = {"flex": {"refundable": True, "change_fee": 0}, "basic": {"refundable": False, "change_fee": 75}}

BOOKINGS = {
    "BK-1001": {"customer": "C-1", "flightId": "LH100", "passengers": ["Ana Silva"], "cabin": "economy",
                "fare": "flex", "price": 120, "status": "confirmed"},
    "BK-1002": {"customer": "C-1", "flightId": "BA300", "passengers": ["Ana Silva"], "cabin": "economy",
                "fare": "basic", "price": 450, "status": "confirmed"},
    "BK-1003": {"customer": "C-1", "flightId": "LH104", "passengers": ["Ana Silva"], "cabin": "economy",
                "fare": "flex", "price": 130, "status": "cancelled"},
    "BK-2001": {"customer": "C-2", "flightId": "TP200", "passengers": ["Ben Okafor"], "cabin": "economy",
                "fare": "flex", "price": 110, "status": "confirmed"},
}

HOTELS = {
    "H-LIS-1": ("Casa Alfama", "Lisbon", 95),
    "H-LIS-2": ("Hotel Tejo", "Lisbon", 140),
    "H-NYC-1": ("Hudson Rooms", "New York", 260),
}

FAULT_TEXT = "ERROR: {tool} failed: the booking system returned a server error."

TOOLS: list[dict[str, Any]] = [
    {"name": "search_flights", "writes": False,
     "description": "Flights between two airports on a date, with the price per person in a cabin and seats left.",
     "parameters": {"type": "object", "required": ["origin", "destination", "date"], "additionalProperties": False,
                    "properties": {
                        "origin": {"type": "string", "pattern": "^[A-Z]{3}$", "description": "IATA airport code"},
                        "destination": {"type": "string", "pattern": "^[A-Z]{3}$"},
                        "date": {"type": "string", "pattern": "^\\d{4}-\\d{2}-\\d{2}$"},
                        "cabin": {"type": "string", "enum": ["economy", "premium", "business"], "default": "economy"},
                        "passengers": {"type": "integer", "minimum": 1, "maximum": 9, "default": 1}}}},
    {"name": "get_booking", "writes": False, "description": "A booking with its flight, passengers and fare rules.",
     "parameters": {"type": "object", "required": ["bookingId"], "additionalProperties": False,
                    "properties": {"bookingId": {"type": "string"}}}},
    {"name": "get_customer", "writes": False, "description": "The customer's profile: voucher balance and points.",
     "parameters": {"type": "object", "required": ["customerId"], "additionalProperties": False,
                    "properties": {"customerId": {"type": "string"}}}},
    {"name": "search_hotels", "writes": False, "description": "Hotels in a city for a stay, cheapest first.",
     "parameters": {"type": "object", "required": ["city", "checkIn", "nights"], "additionalProperties": False,
                    "properties": {"city": {"type": "string"}, "checkIn": {"type": "string"},
                                   "nights": {"type": "integer", "minimum": 1},
                                   "maxPrice": {"type": "number", "description": "per night, EUR"}}}},
    {"name": "book_flight", "writes": True, "description": "Book seats on a flight and pay for them.",
     "parameters": {"type": "object", "required": ["flightId", "passengers", "payment"], "additionalProperties": False,
                    "properties": {
                        "flightId": {"type": "string"},
                        "passengers": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                        "cabin": {"type": "string", "enum": ["economy", "premium", "business"], "default": "economy"},
                        "seat": {"type": "string", "enum": ["aisle", "window", "middle"]},
                        "payment": {"type": "string", "enum": ["card", "voucher", "points"]}}}},
    {"name": "cancel_booking", "writes": True, "description": "Cancel a booking; the refund goes to the card or a voucher.",
     "parameters": {"type": "object", "required": ["bookingId"], "additionalProperties": False,
                    "properties": {"bookingId": {"type": "string"},
                                   "refundTo": {"type": "string", "enum": ["original", "voucher"],
                                                "default": "original"}}}},
    {"name": "change_flight", "writes": True, "description": "Move a booking to another flight on the same route.",
     "parameters": {"type": "object", "required": ["bookingId", "newFlightId"], "additionalProperties": False,
                    "properties": {"bookingId": {"type": "string"}, "newFlightId": {"type": "string"}}}},
    {"name": "book_hotel", "writes": True, "description": "Reserve a hotel stay.",
     "parameters": {"type": "object", "required": ["hotelId", "checkIn", "nights"], "additionalProperties": False,
                    "properties": {"hotelId": {"type": "string"}, "checkIn": {"type": "string"},
                                   "nights": {"type": "integer", "minimum": 1},
                                   "guests": {"type": "integer", "minimum": 1, "default": 1},
                                   "breakfast": {"type": "boolean", "default": False}}}},
]


@dataclass
class World:
    """One conversation's copy of the data: writes change it, the next case starts fresh."""

    customer: str
    faults: dict[str, str] = field(default_factory=dict)
    bookings: dict[str, dict[str, Any]] = field(default_factory=lambda: copy.deepcopy(BOOKINGS))
    seats: dict[str, int] = field(default_factory=lambda: {k: v[5] for k, v in FLIGHTS.items()})
    hotel_stays: list[dict[str, Any]] = field(default_factory=list)
    next_id: int = 5001

    def call(self, tool: str, arguments: dict[str, Any]) -> tuple[str, str]:
        if tool in self.faults:
            return FAULT_TEXT.format(tool=tool), "error"
        try:
            return getattr(self, tool)(**arguments)
        except TypeError as exc:  # a wrong or missing argument, as the tool's own validation would say
            return f"ERROR: {tool}: {exc}", "error"

    # --- reads -----------------------------------------------------------------

    def search_flights(self, origin: str, destination: str, date: str, cabin: str = "economy",
                       passengers: int = 1) -> tuple[str, str]:
        found = [f"{fid} {FLIGHTS[fid][3]} {prices[cabin]} EUR seats {self.seats[fid]}"
                 for fid, (o, d, day, _, prices, _) in FLIGHTS.items()
                 if (o, d, day) == (origin, destination, date) and cabin in prices]
        return ("; ".join(found) or f"no {cabin} flights from {origin} to {destination} on {date}"), "ok"

    def get_booking(self, bookingId: str) -> tuple[str, str]:
        booking = self.bookings.get(bookingId)
        if booking is None or booking["customer"] != self.customer:
            return "Booking not found", "denied" if booking else "ok"
        origin, destination, date, departure, _, _ = FLIGHTS[booking["flightId"]]
        fare = FARES[booking["fare"]]
        return (f"{bookingId} {booking['status']} {booking['flightId']} {origin}-{destination} {date} {departure} "
                f"cabin {booking['cabin']} passengers {', '.join(booking['passengers'])} price {booking['price']} EUR "
                f"fare {booking['fare']} refundable {str(fare['refundable']).lower()} "
                f"change_fee {fare['change_fee']} EUR"), "ok"

    def get_customer(self, customerId: str) -> tuple[str, str]:
        if customerId != self.customer:
            return "Customer not found", "denied"
        c = CUSTOMERS[customerId]
        return f"{c['name']} tier {c['tier']} voucher {c['voucher']} EUR points {c['points']}", "ok"

    def search_hotels(self, city: str, checkIn: str, nights: int, maxPrice: float | None = None) -> tuple[str, str]:
        found = sorted((price, hid, name) for hid, (name, town, price) in HOTELS.items()
                       if town.casefold() == city.casefold() and (maxPrice is None or price <= maxPrice))
        return "; ".join(f"{hid} {name} {price} EUR/night" for price, hid, name in found) or "no hotels", "ok"

    # --- writes ----------------------------------------------------------------

    def book_flight(self, flightId: str, passengers: list[str], payment: str, cabin: str = "economy",
                    seat: str | None = None) -> tuple[str, str]:
        flight = FLIGHTS.get(flightId)
        if flight is None or cabin not in flight[4]:
            return f"ERROR: no {cabin} seats on {flightId}", "error"
        if self.seats[flightId] < len(passengers):
            return f"ERROR: {flightId} has only {self.seats[flightId]} seats left", "error"
        total = flight[4][cabin] * len(passengers)
        if payment == "voucher" and CUSTOMERS[self.customer]["voucher"] < total:
            return f"ERROR: voucher balance too low for {total} EUR", "error"
        booking_id = f"BK-{self.next_id}"
        self.next_id += 1
        self.seats[flightId] -= len(passengers)
        self.bookings[booking_id] = {"customer": self.customer, "flightId": flightId, "passengers": list(passengers),
                                     "cabin": cabin, "fare": "flex", "price": total, "status": "confirmed",
                                     **({"seat": seat} if seat else {}), "payment": payment}
        return f"booked {booking_id} {flightId} total {total} EUR", "ok"

    def cancel_booking(self, bookingId: str, refundTo: str = "original") -> tuple[str, str]:
        booking = self.bookings.get(bookingId)
        if booking is None or booking["customer"] != self.customer:
            return "Booking not found", "denied" if booking else "error"
        if booking["status"] == "cancelled":
            return f"ERROR: {bookingId} is already cancelled", "error"
        if refundTo == "original" and not FARES[booking["fare"]]["refundable"]:
            return f"ERROR: {bookingId} is not refundable; only a voucher is possible", "error"
        booking["status"] = "cancelled"
        return f"cancelled {bookingId}, {booking['price']} EUR to {refundTo}", "ok"

    def change_flight(self, bookingId: str, newFlightId: str) -> tuple[str, str]:
        booking = self.bookings.get(bookingId)
        if booking is None or booking["customer"] != self.customer:
            return "Booking not found", "denied" if booking else "error"
        old, new = FLIGHTS[booking["flightId"]], FLIGHTS.get(newFlightId)
        if new is None or new[:2] != old[:2]:
            return f"ERROR: {newFlightId} is not on the route {old[0]}-{old[1]}", "error"
        booking["flightId"] = newFlightId
        return f"changed {bookingId} to {newFlightId}, fee {FARES[booking['fare']]['change_fee']} EUR", "ok"

    def book_hotel(self, hotelId: str, checkIn: str, nights: int, guests: int = 1,
                   breakfast: bool = False) -> tuple[str, str]:
        if hotelId not in HOTELS:
            return f"ERROR: no hotel {hotelId}", "error"
        stay = {"id": f"HR-{self.next_id}", "hotelId": hotelId, "checkIn": checkIn, "nights": nights,
                "guests": guests, "breakfast": breakfast}
        self.next_id += 1
        self.hotel_stays.append(stay)
        return f"reserved {stay['id']} at {HOTELS[hotelId][0]}, {nights * HOTELS[hotelId][2]} EUR", "ok"

    def state(self) -> dict[str, Any]:
        """What the tools left behind, for the customer: the Reply's ``state``."""
        own = [{"id": bid, **{k: v for k, v in b.items() if k != "customer"}}
               for bid, b in sorted(self.bookings.items()) if b["customer"] == self.customer]
        return {"bookings": own, "hotelStays": list(self.hotel_stays)}
