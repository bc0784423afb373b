"""Urban scene types: mall, stadium, amusement park, parking lot, community, neighbourhood,
alley, factory and construction site."""

from __future__ import annotations

import math

from aerialdojo.sim.embedded.builder import SceneBuilder
from aerialdojo.sim.embedded.catalogue import polar_offsets
from aerialdojo.sim.embedded.primitives import SEAT_M, beam, box, cylinder, frustum, sphere, wedge
from aerialdojo.sim.embedded.scenery import (
    block_grid,
    crane,
    fountain,
    house,
    parking_rows,
    street_grid,
    tower,
    trees,
)
from aerialdojo.sim.embedded.terrain import bump, combine, flat, speckled, waves

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
        # The east wing reaches into the main wing and starts under it (shared planes else).
        b.building(
            "mall_east_wing",
            28.0 - SEAT_M,
            34.0,
            (26.0, 46.0, 11.0 + SEAT_M),
            facade,
            roof=(120, 120, 124),
            base=-SEAT_M,
        )
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
    b.scatter(_PLAZA, 26, b.within(*plaza))
    trees(b, 30, ("broadleaf",), region=(60.0, -60.0, 95.0, 95.0))
    b.scatter(("city_bus", "box_truck", "delivery_van", "motorcycle"), 4)


def stadium(b: SceneBuilder, variant: int) -> None:
    """An oval stadium: grass pitch, ring of sloped stands, floodlight masts, fan zone and
    parking (ID: open bowl; OOD: roofed bowl with a cantilevered canopy)."""
    b.terrain(105.0, flat(), speckled(b.rng, (112, 124, 96), 8.0), resolution_m=5.0)
    street_grid(b, (-88.0, 88.0))
    radius_x, radius_y = (38.0, 28.0) if variant == 0 else (34.0, 26.0)
    b.structure(
        "pitch", "terrain", [(box(2 * radius_x - 14, 2 * radius_y - 12, 0.06), (60, 150, 60))]
    )
    stands = []
    for k in range(28):
        angle = 2 * math.pi * k / 28
        x, y = radius_x * math.cos(angle), radius_y * math.sin(angle)
        yaw = math.atan2(y / radius_y**2, x / radius_x**2)
        # Neighbouring stands overlap: their bottoms take four depths in turn.
        depth = SEAT_M * (1 + k % 4)
        stands.append((wedge(12.0, 9.0, 12.0 + depth).moved((x, y, -depth), yaw), (176, 176, 184)))
        if variant == 1:
            top = (x * 1.2, y * 1.2, 18.0)
            stands.append((beam(top, (x * 0.85, y * 0.85, 18.0), 1.0), (220, 220, 226)))
    b.structure("stands", "structure", stands, footprint=(0.0, 0.0, max(radius_x, radius_y) + 8.0))
    for index, (x, y) in enumerate(polar_offsets(4, 62.0, math.pi / 4)):
        if index < 2:
            tower(
                b,
                f"Floodlight Mast {'AB'[index]}",
                "a tall floodlight mast with a lamp head",
                at=(x, y),
                height=32.0,
                colour=(150, 150, 156),
                top=(250, 250, 210),
            )
    b.scatter(
        (
            "ticket_booth",
            "food_truck",
            "market_stall",
            "portable_toilet",
            "billboard",
            "city_bus",
            "police_car",
            "flag_pole",
            "vending_machine",
            "camera_tower",
        ),
        24,
        b.within(-95.0, -95.0, 95.0, -55.0),
    )
    b.scatter(
        ("soccer_goal", "scoreboard", "camera_tower", "golf_cart"),
        4,
        b.within(-20.0, -12.0, 20.0, 12.0),
    )
    parking_rows(b, (-80.0, 56.0), 2, 30, _CARS, occupancy=0.4)


def park(b: SceneBuilder, variant: int) -> None:
    """An amusement park: ferris wheel, roller-coaster track on pillars, rides and stalls along
    paths (ID: compact; OOD: lakeside park with a different ride mix)."""
    b.terrain(95.0, flat(), speckled(b.rng, (96, 150, 80), 10.0), resolution_m=5.0)
    if variant == 1:
        b.structure(
            "lake",
            "water",
            [(box(50.0, 40.0, 0.1).moved((50.0, 50.0, 0.0)), (50, 110, 150))],
            footprint=(50.0, 50.0, 30.0),
        )
    wheel_x, wheel_y = (-40.0, 30.0) if variant == 0 else (-30.0, -40.0)
    hub = (wheel_x, wheel_y, 24.0)
    spokes = [
        (box(3.0, 3.0, 24.0).moved((wheel_x, wheel_y - 4.0, 0.0)), (200, 200, 210)),
        (box(3.0, 3.0, 24.0).moved((wheel_x, wheel_y + 4.0, 0.0)), (200, 200, 210)),
    ]
    for k in range(12):
        angle = 2 * math.pi * k / 12
        rim = (wheel_x + 20.0 * math.cos(angle), wheel_y, 24.0 + 20.0 * math.sin(angle))
        if k < 6:
            # Opposite spokes are one bar through the hub (two would end on one plane there),
            # and each bar lies its own millimetre off the wheel's plane.
            off_plane = 0.001 * (k - 2.5)
            spokes.append(
                (
                    beam(
                        (2 * hub[0] - rim[0], wheel_y + off_plane, 2 * hub[2] - rim[2]),
                        (rim[0], wheel_y + off_plane, rim[2]),
                        0.4,
                    ),
                    (230, 230, 240),
                )
            )
        # Gondolas hang SEAT_M into the spoke they hang from.
        spokes.append(
            (box(2.0, 2.4, 2.0).moved((rim[0], rim[1], rim[2] - 2.2 + SEAT_M)), (220, 60, 60))
        )
    b.landmark("Ferris Wheel", "a 44 m ferris wheel with red gondolas", spokes, 22.0)
    track = []
    for k in range(16):
        angle = 2 * math.pi * k / 16
        x, y = 30.0 + 30.0 * math.cos(angle), 10.0 + 18.0 * math.sin(angle)
        height = 10.0 + 6.0 * math.sin(3 * angle)
        after = 2 * math.pi * (k + 1) / 16
        following = (
            30.0 + 30.0 * math.cos(after),
            10.0 + 18.0 * math.sin(after),
            10.0 + 6.0 * math.sin(3 * after),
        )
        track.append((beam((x, y, height), following, 1.2), (230, 120, 30)))
        track.append((box(0.6, 0.6, height).moved((x, y, 0.0)), (120, 120, 130)))
    b.landmark("Roller Coaster", "an orange roller coaster on a loop of pillars", track, 4.0)
    b.road([(-90.0, -5.0), (0.0, -5.0), (90.0, -5.0)], 5.0, colour=(190, 170, 140))
    b.road([(0.0, -90.0), (0.0, -5.0), (0.0, 90.0)], 5.0, colour=(190, 170, 140))
    rides = (
        ("carousel", "teacup_ride", "bumper_car_hall", "inflatable_castle")
        if variant == 0
        else ("carousel", "playground_set", "swing_set", "trampoline")
    )
    b.scatter(rides, 6)
    b.scatter(
        (
            "food_cart",
            "market_stall",
            "ticket_booth",
            "patio_umbrella",
            "park_bench",
            "vending_machine",
            "trash_can",
            "golf_cart",
            "statue",
            "picnic_table",
        ),
        34,
    )
    trees(b, 50, ("broadleaf",))


def parking_lot(b: SceneBuilder, variant: int) -> None:
    """A large surface car park with a multi-storey garage (open decks on pillars) and a toll
    plaza (ID: rows of cars; OOD: half-empty lot with trucks and buses)."""
    b.terrain(95.0, flat(), speckled(b.rng, (108, 128, 96), 8.0), resolution_m=5.0)
    street_grid(b, (-82.0,))
    floors = [
        (box(40.0, 30.0, 0.5).moved((40.0, 45.0, 3.2 * level)), (160, 160, 164))
        for level in range(1, 5)
    ]
    floors += [
        (box(0.8, 0.8, 12.9).moved((40.0 + x, 45.0 + y, 0.0)), (140, 140, 144))
        for x in (-18.0, -6.0, 6.0, 18.0)
        for y in (-13.0, 0.0, 13.0)
    ]
    b.landmark("Parking Garage", "a four-deck open parking garage", floors, 26.0)
    tower(
        b,
        "Toll Plaza Sign",
        "a tall blue toll plaza sign",
        at=(-50.0, 60.0),
        height=14.0,
        colour=(40, 80, 180),
        top=(250, 250, 250),
    )
    categories = (
        _CARS if variant == 0 else ("box_truck", "city_bus", "camper_van", "suv", "delivery_van")
    )
    parking_rows(b, (-75.0, -75.0), 5, 22, categories, occupancy=0.55 if variant == 0 else 0.3)
    b.scatter(
        (
            "toll_booth",
            "security_barrier",
            "parking_meter",
            "ev_charger",
            "street_lamp",
            "shopping_cart_corral",
            "trash_can",
            "bus_shelter",
        ),
        18,
        b.within(-80.0, 10.0, 10.0, 90.0),
    )


def community(b: SceneBuilder, variant: int) -> None:
    """A residential community: mid-rise apartment blocks round courtyards with playgrounds
    and gardens (ID: grid; OOD: denser, taller blocks)."""
    b.terrain(95.0, flat(), speckled(b.rng, (96, 140, 84), 10.0), resolution_m=5.0)
    street_grid(b, (-45.0, 45.0))
    palette = ((226, 214, 190), (204, 180, 150), (230, 230, 226), (190, 160, 140))
    heights = (10.0, 20.0) if variant == 0 else (18.0, 30.0)
    block_grid(b, (-70.0, 0.0, 70.0), 40.0, heights=heights, palette=palette, fill=0.7)
    tower(
        b,
        "Community Water Tower",
        "a white water tower on a lattice base",
        at=(0.0, 0.0),
        height=26.0,
        colour=(236, 236, 236),
        top=(60, 120, 190),
    )
    fountain(b, "Courtyard Fountain", 45.0, -45.0 if variant == 0 else 0.0, 4.0)
    b.scatter(
        (
            "playground_set",
            "swing_set",
            "park_bench",
            "trash_can",
            "recycling_bin",
            "sedan",
            "hatchback",
            "bicycle",
            "bike_rack",
            "mailbox",
            "flower_planter",
            "gazebo",
            "trampoline",
            "picnic_table",
        ),
        36,
    )
    trees(b, 60, ("broadleaf",))


def neighborhood(b: SceneBuilder, variant: int) -> None:
    """A suburban neighbourhood: detached houses with pitched roofs on winding streets,
    gardens and driveways (ID: grid streets; OOD: cul-de-sacs on a gentle slope)."""
    relief = flat() if variant == 0 else waves(b.rng, 3.0, 120.0)
    b.terrain(95.0, relief, speckled(b.rng, (100, 146, 76), 10.0), resolution_m=4.0)
    if variant == 0:
        street_grid(b, (-40.0, 20.0))
    else:
        b.road([(-94.0, 0.0), (-30.0, 10.0), (30.0, -10.0), (94.0, 0.0)], 7.0)
        for x in (-40.0, 40.0):
            b.road([(x, 0.0), (x, 60.0)], 6.0)
            b.road([(x, 0.0), (x, -60.0)], 6.0)
    tower(
        b,
        "Church Steeple",
        "a white church steeple with a dark spire",
        at=(-70.0, 70.0),
        height=24.0,
        colour=(240, 240, 236),
        top=(50, 50, 60),
    )
    b.landmark(
        "Village Pond Gazebo",
        "an octagonal gazebo by the pond",
        [
            (
                frustum(5.0, 5.0, 0.3, 8).moved((60.0, -65.0, b.ground(60.0, -65.0))),
                (200, 190, 170),
            ),
            (
                frustum(6.0, 0.0, 3.0, 8).moved((60.0, -65.0, b.ground(60.0, -65.0) + 3.0)),
                (120, 60, 50),
            ),
        ],
        6.0,
    )
    for _ in range(70):
        x, y = b.random_point(8.0)
        if b.is_clear(x, y, 9.0):
            house(
                b,
                x,
                y,
                float(b.rng.choice((0.0, math.pi / 2))),
                (10.0, 8.0, float(b.rng.uniform(5.0, 7.5))),
            )
    b.scatter(
        (
            "sedan",
            "suv",
            "pickup_truck",
            "camper_van",
            "mailbox",
            "trampoline",
            "hot_tub",
            "swing_set",
            "bicycle",
            "trash_can",
            "recycling_bin",
            "picnic_table",
            "fire_hydrant",
        ),
        34,
    )
    trees(b, 80, ("broadleaf", "conifer"))


def alley(b: SceneBuilder, variant: int) -> None:
    """Narrow alleys between tall, tightly packed buildings with awnings and overhead walkways
    (constrained space; ID: straight lanes; OOD: staggered lanes, lower buildings)."""
    b.terrain(70.0, flat(), speckled(b.rng, (96, 92, 88), 10.0), resolution_m=5.0)
    lanes = (-40.0, -14.0, 14.0, 40.0)
    for index, c in enumerate(lanes):
        b.road([(c, -69.0), (c, 69.0)], 5.0, colour=(80, 76, 72))
        if index % 2 == 0:
            b.road([(-69.0, c), (69.0, c)], 5.0, colour=(80, 76, 72))
    palette = ((150, 90, 70), (190, 170, 140), (120, 110, 100), (170, 150, 120), (200, 200, 190))
    heights = (16.0, 28.0) if variant == 0 else (9.0, 16.0)
    for gx in (-54.0, -27.0, 0.0, 27.0, 54.0):
        for gy in (-54.0, -27.0, 0.0, 27.0, 54.0):
            shift = float(b.rng.uniform(-3.0, 3.0)) if variant == 1 else 0.0
            if b.rng.random() < 0.85 and abs(gx) + abs(gy) > 0:
                b.building(
                    "building",
                    gx + shift,
                    gy,
                    (19.0, 19.0, float(b.rng.uniform(*heights))),
                    palette[int(b.rng.integers(len(palette)))],
                    roof=(80, 80, 84),
                )
    tower(
        b,
        "Old Chimney",
        "a tall brick chimney",
        at=(0.0, 0.0),
        height=34.0,
        colour=(150, 70, 50),
        top=(40, 40, 40),
    )
    b.landmark(
        "Red Footbridge",
        "a red enclosed footbridge between two buildings",
        [(box(8.0, 3.0, 3.0).moved((-14.0, 27.0, 9.0)), (180, 40, 40))],
        1.0,
    )
    for k in range(10):
        c = lanes[k % 4]
        y = float(b.rng.uniform(-60.0, 60.0))
        b.structure(
            "awning",
            "structure",
            [
                (
                    # Alternate sides of the lane, jutting 0.8 m over it; each with its own
                    # height and depth to the millimetre, since awnings on a side may overlap.
                    box(1.6 - 0.002 * k, 4.0, 0.2).moved(
                        (c + (2.1 if k % 2 == 0 else -2.1), y, 3.2 + 0.001 * k)
                    ),
                    (40 + 20 * k, 120, 160 - 10 * k),
                )
            ],
        )
    b.scatter(
        (
            "dumpster",
            "recycling_bin",
            "trash_can",
            "air_conditioner_unit",
            "motorcycle",
            "bicycle",
            "wooden_crate",
            "pallet_stack",
            "food_cart",
            "phone_booth",
            "vending_machine",
            "fire_hydrant",
            "delivery_van",
        ),
        40,
        lambda: (
            float(lanes[int(b.rng.integers(4))] + b.rng.uniform(-1.5, 1.5)),
            float(b.rng.uniform(-65.0, 65.0)),
        ),
    )


def factory(b: SceneBuilder, variant: int) -> None:
    """An industrial plant: long sheds with sawtooth roofs, chimneys, silos, pipe bridges and a
    container yard (ID: one big shed; OOD: several smaller sheds and a tank farm)."""
    b.terrain(100.0, flat(), speckled(b.rng, (120, 118, 110), 8.0), resolution_m=5.0)
    street_grid(b, (-60.0, 30.0))
    sheds = (
        [(-20.0, 55.0, 60.0, 30.0)]
        if variant == 0
        else [(-60.0, 60.0, 30.0, 20.0), (0.0, 65.0, 30.0, 20.0)]
    )
    for x, y, length, width in sheds:
        b.building("factory_shed", x, y, (length, width, 10.0), (170, 176, 184), roof=None)
        # Teeth overlap several neighbours: each reaches its own depth into the shed and has
        # its own length, and all stop short of the shed's ends, so that none shares a plane
        # with another or with the shed.
        teeth = [
            (
                wedge(
                    width - 2.0 * SEAT_M, length - 2.0 * SEAT_M * k, 3.0 + SEAT_M * (1 + k)
                ).moved(
                    (x - length / 2 + (k + 0.5) * length / 6, y, 10.0 - SEAT_M * (1 + k)),
                    0.0,
                ),
                (120, 130, 150),
            )
            for k in range(6)
        ]
        b.structure("sawtooth_roof", "roof", teeth)
    for k, x in enumerate((50.0, 62.0)):
        tower(
            b,
            f"Chimney {k + 1}",
            "a tall red-and-white striped chimney",
            at=(x, 60.0),
            height=40.0 - 6 * k,
            colour=(200, 60, 50),
            top=(240, 240, 240),
        )
    silos = [
        (cylinder(5.0, 18.0, 16).moved((60.0 + 11.0 * k, -10.0, 0.0)), (200, 200, 204))
        for k in range(3)
    ]
    b.landmark("Grain Silos", "three tall white silos in a row", silos, 18.0)
    pipes = [(beam((40.0, 40.0, 7.0), (40.0, -5.0, 7.0), 1.0), (110, 110, 120))]
    pipes += [
        (box(0.6, 0.6, 7.0 + SEAT_M).moved((40.0, y, -SEAT_M)), (90, 90, 96))
        for y in (36.0, 20.0, 4.0)
    ]
    b.structure("pipe_bridge", "structure", pipes)
    b.scatter(
        (
            "shipping_container",
            "short_container",
            "forklift",
            "pallet_stack",
            "oil_drum",
            "storage_tank" if variant == 1 else "gas_cylinder_rack",
            "box_truck",
            "tanker_truck",
            "transformer_box",
            "cooling_unit",
            "pallet_rack",
            "cable_reel",
            "pipe_stack",
            "generator",
        ),
        44,
        b.within(-95.0, -95.0, 95.0, 35.0),
    )


def construction_site(b: SceneBuilder, variant: int) -> None:
    """A construction site: tower cranes, a concrete frame under construction (open floors on
    columns), scaffolding, earthworks and site machinery (ID: one frame; OOD: two cranes and
    excavation pits)."""
    relief = (
        flat()
        if variant == 0
        else combine(bump(-40.0, -40.0, 18.0, -4.0), bump(50.0, 40.0, 14.0, 5.0))
    )
    b.terrain(95.0, relief, speckled(b.rng, (150, 126, 96), 12.0), resolution_m=4.0)
    b.road([(-94.0, -70.0), (94.0, -70.0)], 8.0, colour=(110, 104, 96))
    frame = [
        (box(34.0, 22.0, 0.4).moved((10.0, 20.0, 4.0 * level)), (176, 176, 172))
        for level in range(1, 5)
    ]
    frame += [
        # Columns end just inside the top floor slab (not on its top's plane).
        (box(0.7, 0.7, 16.4 - SEAT_M).moved((10.0 + x, 20.0 + y, 0.0)), (150, 150, 148))
        for x in (-16.0, -5.0, 5.0, 16.0)
        for y in (-10.0, 0.0, 10.0)
    ]
    b.structure("concrete_frame", "building", frame, footprint=(10.0, 20.0, 22.0))
    crane(b, "Tower Crane", -25.0, 40.0, height=38.0, jib=40.0, yaw=-0.4)
    if variant == 1:
        crane(b, "Second Crane", 55.0, -20.0, height=30.0, jib=30.0, yaw=2.3, colour=(200, 40, 40))
    else:
        tower(
            b,
            "Site Office Mast",
            "a blue radio mast above the site office",
            at=(60.0, -40.0),
            height=18.0,
            colour=(60, 90, 180),
            top=(240, 240, 240),
        )
    b.scatter(
        (
            "excavator",
            "bulldozer",
            "cement_mixer",
            "dump_truck",
            "site_office",
            "portable_toilet",
            "sand_pile",
            "gravel_pile",
            "rebar_bundle",
            "brick_stack",
            "traffic_cone_group",
            "water_barrier",
            "generator",
            "pallet_stack",
            "floodlight_tower",
        ),
        40,
    )
