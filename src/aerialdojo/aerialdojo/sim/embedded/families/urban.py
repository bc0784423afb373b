"""Urban scene types: mall, stadium, amusement park, parking lot, community, neighbourhood,
alley, factory and construction site."""

from __future__ import annotations

from aerialdojo.sim.embedded.builder import SceneBuilder
from aerialdojo.sim.embedded.primitives import sphere
from aerialdojo.sim.embedded.scenery import fountain, parking_rows, street_grid, tower, trees
from aerialdojo.sim.embedded.terrain import flat, speckled

_CARS = ("sedan", "suv", "hatchback", "taxi", "pickup_truck", "delivery_van", "police_car")
_PLAZA = (
    "patio_umbrella", "market_stall", "food_cart", "park_bench", "vending_machine",
    "newspaper_kiosk", "flower_planter", "bike_rack", "shopping_cart_corral", "billboard",
    "bus_shelter", "ev_charger", "phone_booth", "trash_can", "statue",
)  # fmt: skip


def mall(b: SceneBuilder, variant: int) -> None:
    """A shopping mall with a glass atrium, a plaza and parking lots around it (ID: one
    L-shaped mall; OOD: two facing malls across a long plaza)."""
    b.terrain(100.0, flat(), speckled(b.rng, (104, 130, 84), 10.0), resolution_m=5.0)
    street_grid(b, (-78.0, 78.0) if variant == 0 else (-80.0, 0.0, 80.0))
    facade = (214, 204, 186) if variant == 0 else (176, 190, 204)
    if variant == 0:
        b.building("mall_main_wing", -20.0, 20.0, (70.0, 34.0, 14.0), facade, roof=(120, 120, 124))
        b.building("mall_east_wing", 28.0, 34.0, (26.0, 46.0, 11.0), facade, roof=(120, 120, 124))
        atrium = (-20.0, 20.0)
    else:
        b.building("mall_north", -40.0, 42.0, (60.0, 28.0, 16.0), facade, roof=(110, 110, 116))
        b.building("mall_south", 40.0, -42.0, (60.0, 28.0, 12.0), facade, roof=(110, 110, 116))
        atrium = (-40.0, 42.0)
    height = 14.0 if variant == 0 else 16.0
    b.landmark(
        "Glass Atrium",
        "a glass dome on the mall roof",
        [(sphere(9.0, 6, 14).moved((atrium[0], atrium[1], height - 6.0)), (120, 170, 200))],
        footprint_radius=10.0,
    )
    fountain(b, "Plaza Fountain", 0.0 if variant == 0 else -6.0, -16.0 if variant == 0 else 0.0)
    tower(
        b,
        "Mall Sign Pylon",
        "a tall red sign pylon at the mall entrance",
        at=(40.0, -8.0),
        height=18.0,
        colour=(196, 40, 38),
        top=(240, 240, 240),
    )
    parking_rows(b, (-70.0, -70.0), 3, 14, _CARS)
    parking_rows(b, (10.0, -72.0) if variant == 0 else (-70.0, 60.0), 2, 16, _CARS, yaw=0.0)
    plaza = (-30.0, -40.0, 40.0, -4.0) if variant == 0 else (-40.0, -14.0, 40.0, 14.0)

    def in_plaza() -> tuple[float, float]:
        x, y = b.rng.uniform(plaza[:2], plaza[2:])
        return float(x), float(y)

    b.scatter(_PLAZA, 26, in_plaza)
    trees(b, 30, ("broadleaf",), region=(60.0, -60.0, 95.0, 95.0))
    b.scatter(("city_bus", "box_truck", "delivery_van", "motorcycle"), 4)
