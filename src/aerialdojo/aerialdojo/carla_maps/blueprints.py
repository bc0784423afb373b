"""The CARLA blueprints aerialdojo's CARLA suites spawn, with what a suite says of them.

Blueprint ids are CARLA's own (``Docs/catalogue_vehicles.md`` and ``Docs/catalogue_props.md``
of carla-simulator/carla, present since 0.9.13 and in CARLA-Air's 0.9.16); vehicles take a
``color`` attribute ("R,G,B", ``Docs/bp_library.md``). Sizes are approximate boxes
(length, width, height) of the meshes, used to place a target's anchor outside it and to keep
spawned objects apart; the server knows the real ones, and refuses a spawn that overlaps
(aerialdojo doctor's round trip and the first episode show it).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class VehicleModel:
    """A vehicle blueprint: its AGOS category (``agos.town.SHAPE_CLASSES``), the words a
    description uses, and its approximate box (length, width, height), metres."""

    blueprint: str
    category: str
    words: str
    size: tuple[float, float, float]


@dataclass(frozen=True)
class PropModel:
    """A static prop blueprint: the name a goal gives it and its approximate box."""

    blueprint: str
    name: str
    size: tuple[float, float, float]


VEHICLE_MODELS: tuple[VehicleModel, ...] = (
    VehicleModel("vehicle.tesla.model3", "sedan", "Tesla Model 3 saloon", (4.79, 2.16, 1.49)),
    VehicleModel("vehicle.toyota.prius", "sedan", "Toyota Prius", (4.51, 2.01, 1.52)),
    VehicleModel("vehicle.seat.leon", "sedan", "Seat Leon", (4.19, 1.85, 1.50)),
    VehicleModel("vehicle.audi.a2", "hatchback", "Audi A2 hatchback", (3.71, 1.79, 1.55)),
    VehicleModel("vehicle.citroen.c3", "hatchback", "Citroen C3 hatchback", (3.99, 1.85, 1.55)),
    VehicleModel("vehicle.nissan.micra", "hatchback", "Nissan Micra hatchback", (3.64, 1.85, 1.53)),
    VehicleModel("vehicle.mini.cooper_s", "hatchback", "Mini Cooper", (3.81, 1.94, 1.53)),
    VehicleModel("vehicle.nissan.patrol", "suv", "Nissan Patrol off-roader", (4.61, 1.93, 1.86)),
    VehicleModel("vehicle.jeep.wrangler_rubicon", "suv", "Jeep Wrangler", (3.87, 1.91, 1.88)),
    VehicleModel(
        "vehicle.volkswagen.t2", "camper_van", "Volkswagen T2 camper van", (4.49, 2.07, 2.04)
    ),
    VehicleModel(
        "vehicle.mercedes.sprinter", "delivery_van", "Mercedes Sprinter van", (5.92, 2.00, 2.55)
    ),
)

#: Colours given to spawned vehicles, by name: the vehicle blueprints' ``color`` values.
VEHICLE_COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (200, 20, 20),
    "blue": (20, 50, 200),
    "yellow": (230, 200, 20),
    "green": (20, 150, 40),
    "orange": (240, 120, 10),
    "purple": (120, 30, 150),
    "white": (240, 240, 240),
    "black": (15, 15, 15),
    "silver": (180, 180, 185),
    "grey": (110, 110, 110),
}

#: Props a target can be: each goal names one kind, so a suite's targets tell themselves
#: apart by kind first.
PROP_MODELS: tuple[PropModel, ...] = (
    PropModel("static.prop.vendingmachine", "vending machine", (1.0, 0.9, 2.0)),
    PropModel("static.prop.kiosk_01", "kiosk", (2.4, 2.0, 2.7)),
    PropModel("static.prop.busstop", "bus shelter", (4.0, 1.6, 2.8)),
    PropModel("static.prop.foodcart", "food cart", (2.6, 1.5, 2.4)),
    PropModel("static.prop.advertisement", "advertising board", (1.8, 0.5, 2.6)),
    PropModel("static.prop.container", "waste container", (1.9, 1.2, 1.5)),
)


def vehicle_model(blueprint: str) -> VehicleModel:
    """The catalogue entry of a vehicle blueprint.

    Raises:
        KeyError: not in the catalogue; ``args[0]`` names it.
    """
    for model in VEHICLE_MODELS:
        if model.blueprint == blueprint:
            return model
    raise KeyError(f"vehicle blueprint {blueprint!r} is not in aerialdojo's catalogue")


def colour_attribute(name: str) -> str:
    """The ``color`` attribute value of a colour name ("R,G,B")."""
    return ",".join(str(v) for v in VEHICLE_COLOURS[name])


def colour_name(attribute: str) -> str:
    """The colour name of a ``color`` attribute value; "" for one not in the catalogue."""
    return next((n for n in VEHICLE_COLOURS if colour_attribute(n) == attribute), "")
