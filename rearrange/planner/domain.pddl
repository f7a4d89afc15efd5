; Home Assistant Benchmark rearrangement domain for TP-SRL (typed STRIPS).
;
; Design notes (see rearrange/planner/problem.py for how problems are built):
; - Every receptacle is (in ?r ?c) one container.  Receptacles open to the room are
;   in the pseudo-container `open_air` (type room), which is (opened) and can never be
;   navigated to, so one pick/place action covers both cases.
; - The robot picks standing at the object and places standing at the goal receptacle.
;   Right after opening a container it may also pick from it without moving
;   (Habitat's robot_at is "within 2 m"; TP-SRL plans open then pick).  This shortcut
;   is (just-opened ?c): open adds it, the next nav or pick uses it up, so it never
;   replaces the usual nav(obj) pick(obj).  (No place counterpart: open needs an empty
;   hand, so the robot cannot hold anything right after opening.)
; - place only targets an object's goal receptacle (static goal-rec): with no
;   blocking objects, putting something elsewhere never shortens a plan.  Its
;   effect (placed ?o) is the goal, so an object whose goal receptacle equals its
;   start receptacle is still moved (the goal is a position, not a surface).
; - STRIPS + typing + negative preconditions (open needs a closed container), no
;   conditional effects or quantifiers: the search in search.py handles exactly that.
;   The grounder prunes bindings on the static predicates nav-target, in and goal-rec.
(define (domain hab-rearrange)
  (:requirements :strips :typing :negative-preconditions)
  (:types
    location - object
    movable receptacle container base - location
    fridge drawer room - container)
  (:predicates
    (robot-at ?l - location)
    (nav-target ?l - location)
    (at ?o - movable ?r - receptacle)
    (holding ?o - movable)
    (hand-empty)
    (placed ?o - movable)
    (goal-rec ?o - movable ?r - receptacle)
    (in ?r - receptacle ?c - container)
    (opened ?c - container)
    (just-opened ?l - location))

  (:action nav
    :parameters (?from - location ?to - location)
    :precondition (and (robot-at ?from) (nav-target ?to))
    :effect (and (not (robot-at ?from)) (not (just-opened ?from)) (robot-at ?to)))

  (:action pick
    :parameters (?o - movable ?r - receptacle ?c - container)
    :precondition (and (robot-at ?o) (at ?o ?r) (in ?r ?c) (opened ?c) (hand-empty))
    :effect (and (not (at ?o ?r)) (not (hand-empty)) (not (placed ?o)) (holding ?o)))

  (:action pick-at-container
    :parameters (?o - movable ?r - receptacle ?c - container)
    :precondition (and (just-opened ?c) (at ?o ?r) (in ?r ?c) (opened ?c) (hand-empty))
    :effect (and (not (just-opened ?c)) (not (at ?o ?r)) (not (hand-empty)) (not (placed ?o))
                 (holding ?o)))

  (:action place
    :parameters (?o - movable ?r - receptacle ?c - container)
    :precondition (and (robot-at ?r) (goal-rec ?o ?r) (in ?r ?c) (opened ?c) (holding ?o))
    :effect (and (not (holding ?o)) (hand-empty) (at ?o ?r) (placed ?o)))

  (:action open-fridge
    :parameters (?c - fridge)
    :precondition (and (robot-at ?c) (not (opened ?c)) (hand-empty))
    :effect (and (opened ?c) (just-opened ?c)))

  (:action close-fridge
    :parameters (?c - fridge)
    :precondition (and (robot-at ?c) (opened ?c) (hand-empty))
    :effect (and (not (opened ?c)) (not (just-opened ?c))))

  (:action open-cab
    :parameters (?c - drawer)
    :precondition (and (robot-at ?c) (not (opened ?c)) (hand-empty))
    :effect (and (opened ?c) (just-opened ?c)))

  (:action close-cab
    :parameters (?c - drawer)
    :precondition (and (robot-at ?c) (opened ?c) (hand-empty))
    :effect (and (not (opened ?c)) (not (just-opened ?c))))
)
