"""The cpsat planner's field numbers (planners/cpsat/wire.h) against the
descriptors of an installed ortools package.

The planner writes and reads CP-SAT's messages in the protocol buffer wire
format by hand; what it shares with OR-tools is each field's number and
type. Run with the interpreter of the virtual environment that has ortools
(ctest does, when the cpsat planner is built):
    python tests/cpsat_wire_test.py planners/cpsat/wire.h
"""

import re
import sys

from google.protobuf import descriptor
from ortools.sat import cp_model_pb2, sat_parameters_pb2

# wire.h's constant name prefix -> (message, how the planner encodes it).
FD = descriptor.FieldDescriptor
MESSAGES = {
    "Model": cp_model_pb2.CpModelProto,
    "Variable": cp_model_pb2.IntegerVariableProto,
    "Constraint": cp_model_pb2.ConstraintProto,
    "Linear": cp_model_pb2.LinearConstraintProto,
    "Interval": cp_model_pb2.IntervalConstraintProto,
    "Expression": cp_model_pb2.LinearExpressionProto,
    "NoOverlap2D": cp_model_pb2.NoOverlap2DConstraintProto,
    "NoOverlap": cp_model_pb2.NoOverlapConstraintProto,
    "Bool": cp_model_pb2.BoolArgumentProto,
    "Objective": cp_model_pb2.CpObjectiveProto,
    "Hint": cp_model_pb2.PartialVariableAssignment,
    "Param": sat_parameters_pb2.SatParameters,
    "Response": cp_model_pb2.CpSolverResponse,
}
# Field names that are not the constant's name in snake case.
RENAMED = {
    ("Constraint", "Enforcement"): "enforcement_literal",
    ("Constraint", "NoOverlap2D"): "no_overlap_2d",
    ("NoOverlap2D", "X"): "x_intervals",
    ("NoOverlap2D", "Y"): "y_intervals",
    ("Bool", "Literals"): "literals",
}
# The wire types the planner writes or accepts, by field type.
VARINT = {FD.TYPE_INT32, FD.TYPE_INT64, FD.TYPE_BOOL, FD.TYPE_ENUM}


def snake(camel):
    return re.sub(r"(?<!^)(?=[A-Z])", "_", camel).lower()


def main(path):
    text = open(path, encoding="utf-8").read()
    constants = re.findall(r"inline constexpr int k(\w+) = (\d+);", text)
    checked = 0
    for name, number in constants:
        prefix = next(
            p
            for p in sorted(MESSAGES, key=len, reverse=True)
            if name.startswith(p)
        )
        rest = name[len(prefix) :]
        message = MESSAGES[prefix].DESCRIPTOR
        field_name = RENAMED.get((prefix, rest), snake(rest))
        field = message.fields_by_name.get(field_name)
        if field is None:
            sys.exit(f"{message.full_name} has no field {field_name} (k{name})")
        if field.number != int(number):
            sys.exit(
                f"{message.full_name}.{field_name} is field {field.number}, "
                f"wire.h says {number}"
            )
        if field.type not in VARINT | {
            FD.TYPE_DOUBLE,
            FD.TYPE_MESSAGE,
            FD.TYPE_STRING,
        }:
            sys.exit(f"{message.full_name}.{field_name}: type {field.type}")
        checked += 1
    # A few that must be what the wire code assumes.
    assert cp_model_pb2.CpSolverStatus.Value("OPTIMAL") == 4
    assert cp_model_pb2.CpSolverStatus.Value("INFEASIBLE") == 3
    assert cp_model_pb2.CpSolverStatus.Value("FEASIBLE") == 2
    assert cp_model_pb2.CpSolverStatus.Value("MODEL_INVALID") == 1
    if checked < 30:
        sys.exit(f"only {checked} constants found in {path}")
    print(f"{checked} field numbers agree with ortools' descriptors")


if __name__ == "__main__":
    main(sys.argv[1])
