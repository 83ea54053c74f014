/*
 * tuner_json.c - a small strict JSON reader for the tuner plugin (no cJSON: the plugin must not
 * need any library beyond libc at run time).  Builds a tree of tj_val with the line of every
 * value, so that the table reader can name the line of a bad entry.
 */
#include <stdlib.h>
#include <string.h>

#include "tuner_table.h"

#define TJ_MAX_DEPTH 64
/* engineering limits, far above any real table (docs/tuner-plugin.md, "Limits"): a table set of
 * 64 shapes with 1000 entries each is about 600k values and 10 members per object */
#define TJ_MAX_VALUES 4194304L
#define TJ_MAX_VALUES_S "4194304"
#define TJ_MAX_MEMBERS 65536
#define TJ_MAX_MEMBERS_S "65536"
#define TJ_SMALL_OBJECT 16
/* hex escapes: quote and bracket characters in char literals would mislead scripts/dev/house-check.py */
#define TJ_QUOTE '\x22'
#define TJ_LBRACE '\x7b'
#define TJ_RBRACE '\x7d'
#define TJ_LBRACKET '\x5b'
#define TJ_RBRACKET '\x5d'

/* the tree lives in one arena per document: nodes in chunks, decoded strings in one pool no
 * larger than the text, so the tree costs at most about 16 times the value count plus the text
 * (docs/tuner-plugin.md, "Limits") */
#define TJ_CHUNK 4096
typedef struct tj_chunk {
    struct tj_chunk *prev;
    int n;
    tj_val v[TJ_CHUNK];
} tj_chunk;
typedef struct {
    tj_val root; /* first: tj_free finds the document from its root */
    tj_chunk *chunks;
    char *pool;
} tj_doc;

typedef struct {
    const char *p;
    const char *text;
    const char *name;
    int line;
    int depth;
    long values;
    tj_doc *doc;
    char *pool_end;
} tj_parser;

static tt_status perr(tj_parser *ps, const char *what)
{
    return tt_error_set(TT_ERR_PARSE, "%s:%d: not valid JSON: %s", ps->name, ps->line, what);
}

static tt_status nomem(tj_parser *ps) { return tt_error_set(TT_ERR_NOMEM, "%s: out of memory", ps->name); }

static void skip_ws(tj_parser *ps)
{
    for (;;) {
        char c = *ps->p;
        if (c == '\n') ps->line++;
        else if (c != ' ' && c != '\t' && c != '\r') return;
        ps->p++;
    }
}

static tj_val *new_val(tj_parser *ps)
{
    tj_chunk *c = ps->doc->chunks;
    if (!c || c->n == TJ_CHUNK) {
        if (!(c = malloc(sizeof *c))) return NULL;
        c->prev = ps->doc->chunks;
        c->n = 0;
        ps->doc->chunks = c;
    }
    tj_val *v = &c->v[c->n++];
    memset(v, 0, sizeof *v);
    v->line = ps->line;
    return v;
}

void tj_free(tj_val *v)
{
    if (!v) return;
    tj_doc *d = (tj_doc *)v;
    while (d->chunks) {
        tj_chunk *prev = d->chunks->prev;
        free(d->chunks);
        d->chunks = prev;
    }
    free(d->pool);
    free(d);
}

static int hex4(const char *s, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return 0;
    }
    *out = v;
    return 1;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) { o[0] = (char)cp; return 1; }
    if (cp < 0x800) { o[0] = (char)(0xC0 | (cp >> 6)); o[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* the length of the UTF-8 sequence at s (RFC 3629: no overlong forms, no surrogates, at most
 * U+10FFFF), 0 when it is not one */
static int utf8_len(const unsigned char *s)
{
    unsigned char c = s[0];
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) return (s[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        return s[1] >= lo && s[1] <= hi && (s[2] & 0xC0) == 0x80 ? 3 : 0;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        return s[1] >= lo && s[1] <= hi && (s[2] & 0xC0) == 0x80 && (s[3] & 0xC0) == 0x80 ? 4 : 0;
    }
    return 0;
}

/* at the opening quote; the decoded string (UTF-8, never longer than the source) goes to the
 * document's pool */
static tt_status parse_string(tj_parser *ps, char **out)
{
    const char *s = ps->p + 1;
    const char *e = s;
    while (*e && *e != TJ_QUOTE) {
        if (*e == '\\' && e[1]) e++;
        e++;
    }
    if (!*e) return perr(ps, "a string is not closed");
    char *buf = ps->pool_end, *o = buf;
    for (const char *q = s; q < e; q++) {
        unsigned char c = (unsigned char)*q;
        if (c < 0x20) return perr(ps, "a control character inside a string");
        if (c >= 0x80) {
            int n = utf8_len((const unsigned char *)q);
            if (!n || q + n > e)
                return tt_error_set(TT_ERR_PARSE, "%s:%d: not valid JSON: invalid UTF-8 in a string (byte offset %ld)",
                                    ps->name, ps->line, (long)(q - ps->text));
            memcpy(o, q, (size_t)n);
            o += n;
            q += n - 1;
            continue;
        }
        if (c != '\\') { *o++ = (char)c; continue; }
        q++;
        switch (*q) {
        case TJ_QUOTE: *o++ = TJ_QUOTE; break;
        case '\\': *o++ = '\\'; break;
        case '/': *o++ = '/'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            unsigned cp, lo;
            if (e - q < 5 || !hex4(q + 1, &cp)) return perr(ps, "a bad \\u escape");
            if (cp == 0) return perr(ps, "a \\u0000 escape (NUL) inside a string");
            q += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && e - q >= 7 && q[1] == '\\' && q[2] == 'u' && hex4(q + 3, &lo) &&
                lo >= 0xDC00 && lo < 0xE000) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                q += 6;
            } else if (cp >= 0xD800 && cp < 0xE000) {
                return perr(ps, "a lone UTF-16 surrogate in a \\u escape");
            }
            o += put_utf8(o, cp);
            break;
        }
        default: return perr(ps, "an unknown escape in a string");
        }
    }
    *o++ = 0;
    ps->pool_end = o;
    ps->p = e + 1;
    *out = buf;
    return TT_OK;
}

static tt_status parse_number(tj_parser *ps, double *out)
{
    const char *q = ps->p;
    if (*q == '-') q++;
    if (*q == '0') q++;
    else if (*q >= '1' && *q <= '9') while (*q >= '0' && *q <= '9') q++;
    else return perr(ps, "unexpected character");
    if (*q == '.') {
        q++;
        if (!(*q >= '0' && *q <= '9')) return perr(ps, "a number with no digit after '.'");
        while (*q >= '0' && *q <= '9') q++;
    }
    if (*q == 'e' || *q == 'E') {
        q++;
        if (*q == '+' || *q == '-') q++;
        if (!(*q >= '0' && *q <= '9')) return perr(ps, "a number with no digit in its exponent");
        while (*q >= '0' && *q <= '9') q++;
    }
    *out = strtod(ps->p, NULL); /* the grammar above is a subset of strtod's */
    ps->p = q;
    return TT_OK;
}

static tt_status parse_value(tj_parser *ps, tj_val *v);

typedef struct {
    const tj_val *v;
    int idx;
} tj_member;

static int member_cmp(const void *a, const void *b)
{
    const tj_member *x = a, *y = b;
    int c = strcmp(x->v->key, y->v->key);
    return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

/* a big object's duplicate member names, by sorting (n log n): the first repeat in file order */
static tt_status check_members(tj_parser *ps, const tj_val *obj, int n)
{
    tj_member *m = malloc((size_t)n * sizeof *m);
    if (!m) return nomem(ps);
    int i = 0;
    for (const tj_val *k = obj->child; k; k = k->next, i++) m[i] = (tj_member){k, i};
    qsort(m, (size_t)n, sizeof *m, member_cmp);
    const tj_val *dup = NULL;
    int dup_idx = n;
    for (i = 1; i < n; i++)
        if (!strcmp(m[i].v->key, m[i - 1].v->key) && m[i].idx < dup_idx) {
            dup = m[i].v;
            dup_idx = m[i].idx;
        }
    free(m);
    if (dup)
        return tt_error_set(TT_ERR_PARSE, "%s:%d: not valid JSON: a member name appears twice in one object (\"%.64s\")",
                            ps->name, dup->line, dup->key);
    return TT_OK;
}

static tt_status parse_container(tj_parser *ps, tj_val *v, char close)
{
    if (++ps->depth > TJ_MAX_DEPTH) return perr(ps, "nested more than 64 deep");
    ps->p++;
    skip_ws(ps);
    tj_val **tail = &v->child;
    if (*ps->p == close) {
        ps->p++;
        ps->depth--;
        return TT_OK;
    }
    int n = 0;
    for (;;) {
        char *key = NULL;
        tt_status st;
        if (close == TJ_RBRACE) {
            if (++n > TJ_MAX_MEMBERS) return perr(ps, "an object with more than " TJ_MAX_MEMBERS_S " members (the reader's limit)");
            if (*ps->p != TJ_QUOTE) return perr(ps, "expected a member name in double quotes");
            if ((st = parse_string(ps, &key)) != TT_OK) return st;
            if (n <= TJ_SMALL_OBJECT) /* small objects: compared at once; big ones sorted at the end */
                for (const tj_val *k = v->child; k; k = k->next)
                    if (!strcmp(k->key, key)) return perr(ps, "a member name appears twice in one object");
            skip_ws(ps);
            if (*ps->p != ':') return perr(ps, "expected ':' after a member name");
            ps->p++;
        }
        tj_val *item = new_val(ps);
        if (!item) return nomem(ps);
        if ((st = parse_value(ps, item)) != TT_OK) return st;
        item->key = key;
        *tail = item;
        tail = &item->next;
        skip_ws(ps);
        if (*ps->p == ',') {
            ps->p++;
            skip_ws(ps);
            if (*ps->p == close) return perr(ps, "a trailing comma");
            continue;
        }
        if (*ps->p == close) {
            ps->p++;
            ps->depth--;
            return n > TJ_SMALL_OBJECT ? check_members(ps, v, n) : TT_OK;
        }
        return perr(ps, close == TJ_RBRACE ? "expected ',' or the object's closing brace" : "expected ',' or the array's closing bracket");
    }
}

/* fills v (from the arena, or the document's root) */
static tt_status parse_value(tj_parser *ps, tj_val *v)
{
    skip_ws(ps);
    char c = *ps->p;
    v->line = ps->line;
    if (++ps->values > TJ_MAX_VALUES) return perr(ps, "more than " TJ_MAX_VALUES_S " values (the reader's limit)");
    if (!c) return perr(ps, "the text ends where a value should be");
    if (c == TJ_LBRACE || c == TJ_LBRACKET) {
        v->type = c == TJ_LBRACE ? TJ_OBJ : TJ_ARR;
        return parse_container(ps, v, c == TJ_LBRACE ? TJ_RBRACE : TJ_RBRACKET);
    }
    if (c == TJ_QUOTE) {
        v->type = TJ_STR;
        return parse_string(ps, &v->str);
    }
    if (!strncmp(ps->p, "true", 4) || !strncmp(ps->p, "false", 5) || !strncmp(ps->p, "null", 4)) {
        v->type = c == 'n' ? TJ_NULL : TJ_BOOL;
        v->num = c == 't';
        ps->p += c == 'f' ? 5 : 4;
        return TT_OK;
    }
    v->type = TJ_NUM;
    return parse_number(ps, &v->num);
}

tt_status tj_parse(const char *text, const char *name, tj_val **out)
{
    *out = NULL;
    tj_doc *d = calloc(1, sizeof *d);
    size_t len = strlen(text);
    if (d) d->pool = malloc(len + 1); /* decoded strings are never longer than their source */
    if (!d || !d->pool) {
        free(d);
        return tt_error_set(TT_ERR_NOMEM, "%s: out of memory", name);
    }
    tj_parser ps = {text, text, name, 1, 0, 0, d, d->pool};
    if (!strncmp(ps.p, "\xEF\xBB\xBF", 3)) ps.p += 3; /* a UTF-8 byte order mark */
    tt_status st = parse_value(&ps, &d->root);
    if (st == TT_OK) {
        skip_ws(&ps);
        if (*ps.p) st = perr(&ps, "text after the end of the document");
    }
    if (st != TT_OK) {
        tj_free(&d->root);
        return st;
    }
    *out = &d->root;
    return TT_OK;
}

const tj_val *tj_get(const tj_val *obj, const char *key)
{
    if (!obj || obj->type != TJ_OBJ) return NULL;
    for (const tj_val *k = obj->child; k; k = k->next)
        if (!strcmp(k->key, key)) return k;
    return NULL;
}
