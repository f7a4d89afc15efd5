"""Configuration of the embedded MuJoCo simulator."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class SimConfig:
    # --- sensors -------------------------------------------------------------------------
    depth_width: int = 128
    """Head depth camera width (pixels); the VER paper uses 128x128."""
    depth_height: int = 128
    """Head depth camera height (pixels)."""
    rgb_width: int = 128
    """Head RGB camera width (pixels)."""
    rgb_height: int = 128
    """Head RGB camera height (pixels)."""
    camera_near: float = 0.05
    """Near clip plane of every camera (m)."""
    camera_far: float = 10.0
    """Far clip plane (m); depth is clipped to [0, camera_far]."""
    head_fovy: float = 90.0
    """Vertical field of view of the head camera (degrees; Habitat's head camera is 90)."""
    head_tilt: float = 0.5
    """Fixed head tilt (rad, positive looks down) so the camera sees both floor ahead and
    the surfaces the arm reaches."""
    torso_lift: float = 0.2
    """Fixed torso lift (m, Fetch range 0.0386..0.3861); higher reaches the fridge shelf."""
    # --- physics -------------------------------------------------------------------------
    physics_dt: float = 1.0 / 120.0
    """Physics time step (s): 120 Hz as in Habitat 2.0."""
    substeps: int = 4
    """Physics steps per policy step (policy runs at 30 Hz)."""
    # --- control -------------------------------------------------------------------------
    arm_delta_scale: float = 0.0125
    """Arm action in [-1, 1] times this is the joint target change per policy step (rad)."""
    base_max_linear: float = 2.0
    """Base forward speed at action 1.0 (m/s): 6.7 cm per 30 Hz step. Faster than a real Fetch
    (1 m/s) but close to Habitat 2.0's velocity action; at 1 m/s the drives of a 5-object
    Tidy House alone (~60 m of paths) use up most of the 3000-step HAB budget."""
    base_max_angular: float = 2.5
    """Base turning speed at action 1.0 (rad/s)."""
    robot_radius: float = 0.3
    """Radius of the base footprint used for the 2-D collision check against the layout (m)."""
    base_slide: bool = True
    """When a base move collides, slide (Habitat's `allow_dyn_slide`: the navmesh step slides
    along edges and round corners): first the move less its part into the nearest obstacle
    (along the contact normal), then its x-only and y-only parts. The axis parts alone
    trap the base on convex corners such as a doorway's jamb (docs/DESIGN.md §8.1)."""
    world_blocks_robot: bool = True
    """Walls, fixed furniture and closed or open doors/drawers block the arm (and the base
    carrying it), as they block the base disc: a policy step whose end pose would put a robot
    link deeper than `block_depth` into them (and deeper than it already is) is cut short at
    the last free fraction of the move (docs/DESIGN.md §3). False: the robot passes through
    and only its penetration is reported by `contact_force()` (the world before issue 27)."""
    robot_slide: bool = True
    """When what the base carries (the arm, a held object) stops a base move before it
    starts, move the first part of it that is free: the turn alone, the translation alone,
    then its x-only and y-only parts. The base disc's own contacts slide by `base_slide`;
    without this, a deterministic policy that drives and turns with its arm against a wall
    repeats the same blocked action every step for the rest of its leg (HAB tidy_house,
    learned nav: 9 of 121 legs frozen from step ~50 to their 500-step limit;
    docs/DESIGN.md §3). Only wholly blocked steps change; the parts are checked like any
    move, so nothing ends deeper than `block_depth`."""
    arm_slide: bool = True
    """With `world_blocks_robot`: an arm move that is blocked from its start slides along
    what it touches instead of stopping: the move less its part that drives a robot point
    into a contact of the start pose, checked like any move (rearrange/sim/arm_slide.py).
    A dynamic arm under position control, as Habitat's, slides so; the kinematic arm
    without it stays put, and a deterministic policy asks for the same move again every
    step (docs/DESIGN.md §3). False: the world before it (the shipped skills on 50 val
    episodes of seed 1: the same or better with it, open_fridge 54 -> 64 %)."""
    arm_slide_with_base: bool = True
    """With `robot_slide` and `arm_slide`: a wholly blocked step whose base moves a free
    part of its move also slides its arm move, from the pose that part ends in. Without it
    the base part (often a sliver of a turn) took the step and the arm stayed where it was:
    the learned pick and close_fridge --base-movement froze so, an arm link against the
    fridge's side wall or its open door (pick: 13 of its 21 timeouts on val episodes of
    seed 0; docs/DESIGN.md §3). With it a base part under 1e-4 (m or rad) counts as none.
    False: the world before it."""
    stop_loose_parts: bool = True
    """With `world_blocks_robot`: a door or drawer that nothing holds and that moved during
    a step (let go while it swung, it coasts on) is re-measured against the robot after the
    physics, and put back where the step found it, at rest, if it ends deeper in the robot
    than `block_depth` allows: the robot stops it, as it stops the door it holds. False: the
    world before it, where a learned open_fridge's panel coasted 5.5 cm into the gripper
    unmeasured (docs/DESIGN.md §3)."""
    block_held_handle: bool = False
    """With `world_blocks_robot`: the handle bar the gripper holds counts in the re-measure
    after the physics (`_check_held_part`) beyond the overlap the grasp began with, as any
    geometry counts beyond `block_depth`: a step that pushes the gripper on into the bar
    (the weld lags the gripper when the arm pushes the door) is undone. False: the bar is
    exempt while held and counted only once let go (a gripper that let go with the bar
    turned into it stayed up to 4.7 cm inside it, ≤ 1 episode in 100). Policies trained
    with it off learned to push the bar (docs/DESIGN.md §3)."""
    block_depth: float = 0.01
    """Deepest robot-vs-static overlap (m) a step may end in: contact, not penetration. Half
    of the 2 cm the physical-honesty target allows, so a step's cut is never the one that
    crosses it."""
    block_search_steps: int = 4
    """Bisection steps that find the free fraction of a blocked move (1/16 of a step)."""
    # --- suction gripper -----------------------------------------------------------------
    grasp_threshold: float = 0.02
    """An object (or handle) grasps only if its surface is within this distance of the
    gripper fingers (m): suction on contact."""
    grasp_violation_dist: float = 0.2
    """The hold counts as violated (and is released) when the held body's anchor is pulled
    farther than this from the gripper (m)."""
    # --- rendering -----------------------------------------------------------------------
    third_person_width: int = 640
    """Default width of `render_third_person` frames."""
    third_person_height: int = 480
    """Default height of `render_third_person` frames."""
    render_threads: int = 1
    """Mesa llvmpipe rasteriser threads (sets LP_NUM_THREADS unless already set, before the
    first renderer of the process). One per process is fastest when several env workers
    share the cores; ignored by GPU EGL drivers."""
    head_cheap_primitives: bool = True
    """Head cameras tessellate spheres/cylinders coarsely and draw box faces as one quad
    (about 2x faster depth on llvmpipe; depth differs by < 1 cm at object silhouettes).
    Third-person renders keep MuJoCo's default quality."""
    head_lowpoly_robot: bool = True
    """Head cameras see low-poly copies of the robot's arm meshes (vertices within a 1.5 cm
    cell of the real surface, 5x fewer triangles); third-person views show the full meshes.
    Physics is unaffected (the copies are massless and collide with nothing)."""
    door_blocks_base: bool = True
    """An open fridge door's panel (at its current angle) is an obstacle for base moves,
    like walls and furniture. Drawers are not: they sit above the Fetch base."""
    object_damping: float = 0.002
    """Linear damping of free objects (keeps resting objects from creeping)."""

    def __post_init__(self) -> None:
        for name in (
            "depth_width",
            "depth_height",
            "rgb_width",
            "rgb_height",
            "substeps",
            "render_threads",
        ):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"SimConfig.{name} must be >= 1, got {getattr(self, name)}")
        if not 0 < self.camera_near < self.camera_far:
            raise ValueError(
                f"SimConfig needs 0 < camera_near < camera_far, got {self.camera_near}, "
                f"{self.camera_far}"
            )
        if self.physics_dt <= 0:
            raise ValueError(f"SimConfig.physics_dt must be > 0, got {self.physics_dt}")

    @property
    def policy_dt(self) -> float:
        """Seconds per policy step."""
        return self.physics_dt * self.substeps
