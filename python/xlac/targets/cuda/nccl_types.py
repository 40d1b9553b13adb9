"""What NCCL can reduce: its element types and reductions (nccl.h), and how
StableHLO's map onto them."""

from __future__ import annotations

# ncclDataType_t
DTYPES = {"i8": 0, "ui8": 1, "i32": 2, "ui32": 3, "i64": 4, "ui64": 5, "f16": 6, "f32": 7,
          "f64": 8, "bf16": 9}
BYTES = 1                        # ncclUint8: data that is only moved travels as bytes
# ncclRedOp_t
OPS = {"add": 0, "mul": 1, "max": 2, "min": 3}
# i1 travels as bytes of 0/1: or is max, and is min (add/mul on i1 are or/and)
_PREDICATE_OPS = {"add": "max", "or": "max", "max": "max", "mul": "min", "and": "min", "min": "min"}


def reduction_for(element: str, reduction: str) -> tuple[int, int, int]:
    """(ncclDataType_t, ncclRedOp_t, elements per StableHLO element) for a reduction;
    ValueError saying why NCCL cannot do it."""
    if element == "i1":
        if reduction not in _PREDICATE_OPS:
            raise ValueError(f"NCCL has no {reduction} of i1")
        return DTYPES["ui8"], OPS[_PREDICATE_OPS[reduction]], 1
    if element.startswith("complex<"):
        if reduction != "add":
            raise ValueError(f"NCCL has no {reduction} of {element} (only add, as two floats)")
        return DTYPES[element[len("complex<"):-1]], OPS["add"], 2
    if element not in DTYPES:
        raise ValueError(f"NCCL cannot reduce {element}")
    if reduction not in OPS:
        raise ValueError(f"NCCL has no {reduction} reduction (only add, mul, min, max)")
    return DTYPES[element], OPS[reduction], 1
