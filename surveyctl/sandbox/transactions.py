"""The transaction record of spec 2.10: its keys, their types, and how a stored record is shown.

A record is stored whole (every key below, plus `Parent ID`). The list of a survey's
transactions (4.4) shows `Parent ID`; the single record (4.5) leaves it out. Both carry `PSID`
and `Survey ID`.
"""

from __future__ import annotations

INTEGER_KEYS = (
    "Survey ID", "Supplier ID", "Buyer ID", "Respondent Status Code", "Block",
    "Is Block Factor", "GPP", "GPP LOI", "GPP IR", "Respondent LOI", "Reconciliation Status",
    "Gender Code", "Age", "Income", "Race Code", "Race/Ethnicity Code", "HispanicOrigin Code",
    "Relationship Code", "Employment Code", "Education Code", "Device Code", "Children Count",
    "Region Code", "Division Code", "State Code",
)  # fmt: skip
NUMBER_KEYS = ("Expected Buyer CPI", "Expected Buyer CPI Fx", "Respondent Buyer CPI")
STRING_KEYS = (
    "PSID", "Transaction ID", "Project Name", "Child Type", "Survey Country", "Survey Language",
    "Supplier Name", "Supplier Group", "PO / Billing", "Requested By", "Supplier Respondent ID",
    "Supplier Sid", "Buyer Name", "PS Entry DateTime", "Buyer Survey Entry Datetime",
    "Buyer Survey Return Datetime", "PS Exit Datetime", "Respondent Status Description",
    "Offer ID", "Respondent Source", "Reconciliation Date", "Reconciliation Reason",
    "Transaction Original Status", "Transaction Original Description", "PM", "Buyer PM Email",
    "Sub Supplier Name", "PS_Termination Reason", "PS_Termination Code", "PS_QuotaFull Reason",
    "Gender", "Race", "Race/Ethnicity", "HispanicOrigin", "Relationship", "Employment",
    "Education", "Device", "ZipCode", "Region", "Division", "State", "Browser", "UserAgent", "IP",
    "Buyer PM", "Reconciliation By", "Respondent Substatus Description",
)  # fmt: skip
CHILD_KEYS = tuple(f"Child{n} {what}" for n in range(1, 6) for what in ("Age", "Gender"))
BOOLEAN_KEYS = ("Programmatic Direct Transaction", "Modular Transaction")
PARENT_ID = "Parent ID"

RECORD_KEYS = INTEGER_KEYS + NUMBER_KEYS + STRING_KEYS + CHILD_KEYS + BOOLEAN_KEYS

# Reconciliation Status values (sandbox decision; the spec does not show them).
NOT_RECONCILED = 0
ACCEPTED = 1
REJECTED = 2

COMPLETE = 21  # Respondent Status Code of a complete (public facts)


def _default(key: str) -> object:
    if key in INTEGER_KEYS:
        return 0
    if key in NUMBER_KEYS:
        return 0.0
    if key in BOOLEAN_KEYS:
        return False
    return ""


# The value types each key takes and its default, looked up once per key of a record (the
# traffic simulator and bulk inserts check every key of thousands of records).
_TYPES: dict[str, tuple[type, ...]] = {
    **dict.fromkeys(STRING_KEYS, (str,)),
    **dict.fromkeys(INTEGER_KEYS, (int,)),
    **dict.fromkeys(NUMBER_KEYS, (int, float)),
    **dict.fromkeys(BOOLEAN_KEYS, (bool,)),
    **dict.fromkeys(CHILD_KEYS, (str, int)),
}
_DEFAULTS: dict[str, object] = {key: _default(key) for key in RECORD_KEYS}
_PLAIN: dict[str, frozenset[type]] = {key: frozenset(types) for key, types in _TYPES.items()}


def _type_ok(key: str, value: object) -> bool:
    types = _TYPES[key]
    # bool is an int to isinstance; only the boolean keys take it.
    return isinstance(value, types) and (types == (bool,) or not isinstance(value, bool))


def complete_record(survey_id: int, record: dict) -> dict:
    """The record to store: `record` checked key by key, missing keys filled with defaults.

    Defaults: 0 for integers, 0.0 for numbers, False for booleans, "" for strings and children.
    `Survey ID` is set to `survey_id`; `Transaction ID` must be given. Raises ValueError for
    an unknown key, a value of the wrong type, or a missing transaction id.
    """
    unknown = record.keys() - _TYPES.keys() - {PARENT_ID}
    if unknown:
        raise ValueError(f"unknown transaction record keys: {sorted(unknown)}")
    for key, value in record.items():
        if type(value) in _PLAIN.get(key, ()):  # the common case, decided without isinstance
            continue
        if key != PARENT_ID and not _type_ok(key, value):
            raise ValueError(f"transaction record key {key!r} has a value of the wrong type")
    if not record.get("Transaction ID"):
        raise ValueError("a transaction record needs its 'Transaction ID'")
    full = dict(_DEFAULTS)  # keys in RECORD_KEYS order, as given values replace defaults
    full.update(record)
    full.pop(PARENT_ID, None)
    full["Survey ID"] = survey_id
    full[PARENT_ID] = str(record.get(PARENT_ID, ""))
    return full


def single(record: dict) -> dict:
    """A record as the single-transaction answer (4.5): without `Parent ID`."""
    return {key: value for key, value in record.items() if key != PARENT_ID}
