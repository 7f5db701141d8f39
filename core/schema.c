/*
 * schema.c - the table of schema.def at run time: its records, its fields
 * and how each type is spelt.
 *
 * Invariants: ct_schema_fields lists every CT_FIELD row in the table's
 * order, each pointing at the record it follows; each record's first is
 * the index of its first field there; no record has more fields than its masks
 * have bits (checked here at compile time).
 */
#include "schema.h"

const ct_schema_record ct_schema_records[CT_RECORDS] = {
#define CT_RECORD(record, title) {#record, title, CT_MARK_##record - CT_RECORD_##record},
#define CT_FIELD(record, key, type, meaning)
#include "schema.def"
#undef CT_RECORD
#undef CT_FIELD
};

const ct_schema_field ct_schema_fields[] = {
#define CT_RECORD(record, title)
#define CT_FIELD(record, key, type, meaning) \
    {CT_RECORD_##record, #key, CT_TYPE_##type, (ct_schema_shape)CT_TYPE_SHAPE_##type, meaning},
#include "schema.def"
#undef CT_RECORD
#undef CT_FIELD
};

#define CT_RECORD(record, title)
#define CT_FIELD(record, key, type, meaning)                                                \
    _Static_assert(CT_MARK_##record##__##key - CT_MARK_##record - 1 < CT_RECORD_FIELDS_MAX, \
                   "a record's fields fit its masks");
#include "schema.def"
#undef CT_RECORD
#undef CT_FIELD

const size_t ct_schema_n_fields = sizeof ct_schema_fields / sizeof ct_schema_fields[0];

const char *ct_schema_type_text(ct_schema_type type)
{
    static const char *const text[] = {
#define CT_SCHEMA_TYPE(type, spelt) [CT_TYPE_##type] = spelt,
#include "schema_types.def"
#undef CT_SCHEMA_TYPE
    };
    return (unsigned)type < sizeof text / sizeof text[0] ? text[type] : "?";
}
