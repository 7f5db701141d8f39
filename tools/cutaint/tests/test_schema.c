/*
 * test_schema.c - the serialisers generated from core/schema.def write and
 * read every field of the table: each record, every field set to a value
 * of its own, is written by the generated writer (schema_write.h), parsed
 * (jsonr.h) and read back by the generated reader (schema_read.h).  A field
 * the writer leaves out, writes out of the table's order or as another
 * value, or one the reader does not fill, turns a test red, naming the
 * record and the key.
 *
 * The structs are reached the way the serialisers reach them: through
 * offsets generated here from the same table, so the test follows the
 * table as it grows and spells no record itself.
 */
#include "jsonr.h"
#include "schema_read.h"
#include "schema_write.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const size_t out_offset[] = {
#define CT_RECORD(record, title)
#define CT_FIELD(record, key, type, meaning) offsetof(struct ct_out_##record, key),
#include "schema.def"
#undef CT_RECORD
#undef CT_FIELD
};

static const size_t in_offset[] = {
#define CT_RECORD(record, title)
#define CT_FIELD(record, key, type, meaning) offsetof(struct ct_in_##record, key),
#include "schema.def"
#undef CT_RECORD
#undef CT_FIELD
};

/* Room for any record's struct, either side. */
typedef union any_record {
#define CT_RECORD(record, title) struct ct_out_##record out_##record;
#define CT_FIELD(record, key, type, meaning)
#include "schema.def"
#undef CT_RECORD
#undef CT_FIELD
#define CT_RECORD(record, title) struct ct_in_##record in_##record;
#define CT_FIELD(record, key, type, meaning)
#include "schema.def"
#undef CT_RECORD
#undef CT_FIELD
} any_record;

/* ---- each field's own value, by its index in the table -------------------- */

static const char *const sample_strings[] = {"first", "second \"quoted\"", "third"};

static const char *sample_string(const void *items, size_t i, char *scratch, size_t cap)
{
    (void)scratch;
    (void)cap;
    return ((const char *const *)items)[i];
}

static int64_t sample_ints[] = {3, -4, 5};

/* An object's one member, {"n": i}: enough to see it written and read. */
static void sample_object(ct_jsonl *j, const void *items, size_t i)
{
    (void)items;
    ct_jsonl_int(j, "n", (int64_t)i);
}

static int64_t sample_int(size_t field)
{
    return 1000 + (int64_t)field;
}

static char sample_text[sizeof out_offset / sizeof out_offset[0]][48];

static void fill(const ct_schema_field *f, size_t field, void *value)
{
    switch (f->shape) {
    case CT_SHAPE_STR:
        snprintf(sample_text[field], sizeof sample_text[field], "%s #%zu", f->key, field);
        *(const char **)value = sample_text[field];
        return;
    case CT_SHAPE_HEX:
    case CT_SHAPE_INT:
    case CT_SHAPE_NUM: *(int64_t *)value = sample_int(field) * (f->shape == CT_SHAPE_NUM ? 1000000 : 1); return;
    case CT_SHAPE_BOOL:
        *(bool *)value = field % 2 == 0; /* both values, over the fields */
        return;
    case CT_SHAPE_DIMS: *(ct_dims *)value = (ct_dims){{sample_int(field), 2, 3}}; return;
    case CT_SHAPE_STRS: *(ct_out_strings *)value = (ct_out_strings){sample_strings, 3, sample_string}; return;
    case CT_SHAPE_INTS: *(ct_out_ints *)value = (ct_out_ints){sample_ints, 3}; return;
    case CT_SHAPE_OBJ:
    case CT_SHAPE_OBJS: *(ct_out_objects *)value = (ct_out_objects){NULL, 2, sample_object}; return;
    }
    cr_assert_fail("field %s: a shape the test does not know", f->key);
}

/* ---- writing and reading one record ------------------------------------- */

static char line[65536];
static jsonr_doc doc;

static void teardown(void)
{
    jsonr_free(&doc);
}

TestSuite(schema, .fini = teardown);

static size_t line_len;

static void append(void *arg, const char *piece, size_t len)
{
    (void)arg;
    cr_assert_lt(line_len + len, sizeof line);
    memcpy(line + line_len, piece, len);
    line_len += len;
}

/* Writes record r from out as a line of its own (streamed: nothing cut,
 * no envelope), parses it and returns the record's object. */
static const jv *write_and_parse(unsigned r, const any_record *out)
{
    char buf[256];
    ct_jsonl j;
    line_len = 0;
    ct_jsonl_begin_stream(&j, buf, sizeof buf, append, NULL);
    ct_schema_write(&j, r, out);
    ct_jsonl_end(&j);
    const char *why = NULL;
    cr_assert(jsonr_parse(&doc, line, line_len, &why), "%s: the line is JSON (%s)", ct_schema_records[r].name, why);
    return jsonr_root(&doc);
}

static unsigned first_field(unsigned r)
{
    return ct_schema_records[r].first;
}

static bool of_record(unsigned r, unsigned i)
{
    return i < ct_schema_n_fields && ct_schema_fields[i].record == r;
}

static const char *record_name(unsigned r)
{
    return ct_schema_records[r].name;
}

static void check_value(unsigned r, unsigned i, const jv *v, const void *in)
{
    const ct_schema_field *f = &ct_schema_fields[i];
    const char *rec = record_name(r);
    switch (f->shape) {
    case CT_SHAPE_STR: {
        const ct_text *t = in;
        cr_assert(t->str && t->len == strlen(sample_text[i]) && memcmp(t->str, sample_text[i], t->len) == 0,
                  "%s.%s: read back as written", rec, f->key);
        return;
    }
    case CT_SHAPE_HEX: {
        char hex[32];
        snprintf(hex, sizeof hex, "0x%llx", (unsigned long long)sample_int(i));
        const ct_text *t = in;
        cr_assert(t->str && t->len == strlen(hex) && memcmp(t->str, hex, t->len) == 0, "%s.%s: read back as %s", rec,
                  f->key, hex);
        return;
    }
    case CT_SHAPE_INT:
        cr_assert_eq(*(const int64_t *)in, sample_int(i), "%s.%s: read back as written", rec, f->key);
        return;
    case CT_SHAPE_NUM:
        cr_assert_eq(*(const double *)in, (double)sample_int(i) / 1000, "%s.%s: read back as written", rec, f->key);
        return;
    case CT_SHAPE_BOOL: cr_assert_eq(*(const bool *)in, i % 2 == 0, "%s.%s: read back as written", rec, f->key); return;
    case CT_SHAPE_DIMS: {
        const ct_dims *d = in;
        cr_assert(d->d[0] == sample_int(i) && d->d[1] == 2 && d->d[2] == 3, "%s.%s: read back as written", rec, f->key);
        return;
    }
    case CT_SHAPE_STRS:
    case CT_SHAPE_INTS:
    case CT_SHAPE_OBJ:
    case CT_SHAPE_OBJS: {
        const jv *node = *(const jv *const *)in;
        cr_assert_eq(node, v, "%s.%s: the reader keeps its node", rec, f->key);
        unsigned expected = f->shape == CT_SHAPE_OBJ ? 1 : f->shape == CT_SHAPE_OBJS ? 2 : 3;
        cr_assert_eq(node->count, expected, "%s.%s: every element written", rec, f->key);
        return;
    }
    }
    cr_assert_fail("%s.%s: a shape the test does not know", rec, f->key);
}

/* Every field of every record is written, in the table's order, and read
 * back as it was written. */
Test(schema, every_field_is_written_and_read)
{
    for (unsigned r = 0; r < CT_RECORDS; r++) {
        any_record out, in;
        memset(&out, 0, sizeof out);
        for (unsigned i = first_field(r); of_record(r, i); i++)
            fill(&ct_schema_fields[i], i, (char *)&out + out_offset[i]);
        const jv *obj = write_and_parse(r, &out);
        const jv *m = jsonr_first(&doc, obj);
        ct_schema_read(&doc, obj, r, &in);
        uint64_t has = *(const uint64_t *)&in;
        for (unsigned i = first_field(r); of_record(r, i); i++, m = jsonr_next(&doc, m)) {
            const char *key = ct_schema_fields[i].key;
            cr_assert(m, "%s.%s: written", record_name(r), key);
            cr_assert(m->key_len == strlen(key) && memcmp(m->key, key, m->key_len) == 0,
                      "%s.%s: written in the table's order (found %.*s there)", record_name(r), key, (int)m->key_len,
                      m->key);
            cr_assert(has & UINT64_C(1) << (i - first_field(r)), "%s.%s: read", record_name(r), key);
            check_value(r, i, m, (const char *)&in + in_offset[i]);
        }
        cr_assert_null(m, "%s: nothing written past its fields", record_name(r));
    }
}

/* absent leaves a field out, nulls writes null, and the reader then has
 * neither. */
Test(schema, masks_leave_out_or_write_null)
{
    for (unsigned r = 0; r < CT_RECORDS; r++) {
        any_record out, in;
        memset(&out, 0, sizeof out);
        for (unsigned i = first_field(r); of_record(r, i); i++)
            fill(&ct_schema_fields[i], i, (char *)&out + out_offset[i]);
        uint64_t *masks = (uint64_t *)&out; /* absent, nulls */
        masks[1] = ~UINT64_C(0);
        const jv *obj = write_and_parse(r, &out);
        ct_schema_read(&doc, obj, r, &in);
        for (unsigned i = first_field(r); of_record(r, i); i++) {
            const jv *v = jsonr_get(&doc, obj, ct_schema_fields[i].key);
            cr_assert(v && v->type == JV_NULL, "%s.%s: written null", record_name(r), ct_schema_fields[i].key);
        }
        cr_assert_eq(*(const uint64_t *)&in, 0, "%s: a null is not had", record_name(r));
        masks[0] = ~UINT64_C(0);
        obj = write_and_parse(r, &out);
        cr_assert_eq(obj->count, 0, "%s: absent fields are left out", record_name(r));
    }
}

/* A value of the wrong type reads as absent, the rest of the line still
 * read (report.h). */
Test(schema, a_wrong_type_reads_as_absent)
{
    char text[] = "{\"event\":7,\"time\":1.5,\"pid\":\"12\"}";
    cr_assert(jsonr_parse(&doc, text, strlen(text), NULL));
    ct_in_envelope in;
    ct_read_envelope(&doc, jsonr_root(&doc), &in);
    cr_assert(!CT_HAS(&in, envelope, event) && !CT_HAS(&in, envelope, pid));
    cr_assert(CT_HAS(&in, envelope, time) && in.time == 1.5);
}
