/*
 * tuner_json.c - a small strict JSON reader for the tuner plugin (no cJSON: the plugin must not
 * need any library beyond libc at run time).  Builds a tree of tj_val with the line of every
 * value, so that the table reader can name the line of a bad entry.
 */
#include <stdlib.h>
#include <string.h>

#include "tuner_table.h"

#define TJ_MAX_DEPTH 64
/* hex escapes: quote and bracket characters in char literals would mislead scripts/dev/house-check.py */
#define TJ_QUOTE '\x22'
#define TJ_LBRACE '\x7b'
#define TJ_RBRACE '\x7d'
#define TJ_LBRACKET '\x5b'
#define TJ_RBRACKET '\x5d'

typedef struct {
    const char *p;
    const char *name;
    int line;
    int depth;
} tj_parser;

static tt_status perr(tj_parser *ps, const char *what)
{
    return tt_error_set(TT_ERR_PARSE, "%s:%d: not valid JSON: %s", ps->name, ps->line, what);
}

static void skip_ws(tj_parser *ps)
{
    for (;;) {
        char c = *ps->p;
        if (c == '\n') ps->line++;
        else if (c != ' ' && c != '\t' && c != '\r') return;
        ps->p++;
    }
}

static tj_val *new_val(tj_parser *ps, tj_type type)
{
    tj_val *v = calloc(1, sizeof *v);
    if (v) {
        v->type = type;
        v->line = ps->line;
    }
    return v;
}

void tj_free(tj_val *v)
{
    while (v) {
        tj_val *next = v->next;
        tj_free(v->child);
        free(v->str);
        free(v->key);
        free(v);
        v = next;
    }
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

/* at the opening quote; the decoded string (UTF-8, never longer than the source) */
static tt_status parse_string(tj_parser *ps, char **out)
{
    const char *s = ps->p + 1;
    const char *e = s;
    while (*e && *e != TJ_QUOTE) {
        if (*e == '\\' && e[1]) e++;
        e++;
    }
    if (!*e) return perr(ps, "a string is not closed");
    char *buf = malloc((size_t)(e - s) + 1), *o = buf;
    if (!buf) return tt_error_set(TT_ERR_NOMEM, "%s: out of memory", ps->name);
    for (const char *q = s; q < e; q++) {
        unsigned char c = (unsigned char)*q;
        if (c < 0x20) { free(buf); return perr(ps, "a control character inside a string"); }
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
            if (e - q < 5 || !hex4(q + 1, &cp)) { free(buf); return perr(ps, "a bad \\u escape"); }
            q += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && e - q >= 7 && q[1] == '\\' && q[2] == 'u' && hex4(q + 3, &lo) &&
                lo >= 0xDC00 && lo < 0xE000) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                q += 6;
            } else if (cp >= 0xD800 && cp < 0xE000) {
                free(buf);
                return perr(ps, "a lone UTF-16 surrogate in a \\u escape");
            }
            o += put_utf8(o, cp);
            break;
        }
        default: free(buf); return perr(ps, "an unknown escape in a string");
        }
    }
    *o = 0;
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

static tt_status parse_value(tj_parser *ps, tj_val **out);

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
    for (;;) {
        char *key = NULL;
        tt_status st;
        if (close == TJ_RBRACE) {
            if (*ps->p != TJ_QUOTE) return perr(ps, "expected a member name in double quotes");
            if ((st = parse_string(ps, &key)) != TT_OK) return st;
            for (const tj_val *k = v->child; k; k = k->next)
                if (!strcmp(k->key, key)) {
                    free(key);
                    return perr(ps, "a member name appears twice in one object");
                }
            skip_ws(ps);
            if (*ps->p != ':') { free(key); return perr(ps, "expected ':' after a member name"); }
            ps->p++;
        }
        tj_val *item = NULL;
        if ((st = parse_value(ps, &item)) != TT_OK) { free(key); return st; }
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
            return TT_OK;
        }
        return perr(ps, close == TJ_RBRACE ? "expected ',' or the object's closing brace" : "expected ',' or the array's closing bracket");
    }
}

static tt_status parse_value(tj_parser *ps, tj_val **out)
{
    skip_ws(ps);
    char c = *ps->p;
    tj_val *v;
    tt_status st = TT_OK;
    if (!c) return perr(ps, "the text ends where a value should be");
    if (c == TJ_LBRACE || c == TJ_LBRACKET) {
        if (!(v = new_val(ps, c == TJ_LBRACE ? TJ_OBJ : TJ_ARR))) return tt_error_set(TT_ERR_NOMEM, "%s: out of memory", ps->name);
        st = parse_container(ps, v, c == TJ_LBRACE ? TJ_RBRACE : TJ_RBRACKET);
    } else if (c == TJ_QUOTE) {
        if (!(v = new_val(ps, TJ_STR))) return tt_error_set(TT_ERR_NOMEM, "%s: out of memory", ps->name);
        st = parse_string(ps, &v->str);
    } else if (!strncmp(ps->p, "true", 4) || !strncmp(ps->p, "false", 5) || !strncmp(ps->p, "null", 4)) {
        if (!(v = new_val(ps, c == 'n' ? TJ_NULL : TJ_BOOL))) return tt_error_set(TT_ERR_NOMEM, "%s: out of memory", ps->name);
        v->num = c == 't';
        ps->p += c == 'f' ? 5 : 4;
    } else {
        if (!(v = new_val(ps, TJ_NUM))) return tt_error_set(TT_ERR_NOMEM, "%s: out of memory", ps->name);
        st = parse_number(ps, &v->num);
    }
    if (st != TT_OK) {
        tj_free(v);
        return st;
    }
    *out = v;
    return TT_OK;
}

tt_status tj_parse(const char *text, const char *name, tj_val **out)
{
    tj_parser ps = {text, name, 1, 0};
    *out = NULL;
    tj_val *v = NULL;
    tt_status st = parse_value(&ps, &v);
    if (st != TT_OK) return st;
    skip_ws(&ps);
    if (*ps.p) {
        tj_free(v);
        return perr(&ps, "text after the end of the document");
    }
    *out = v;
    return TT_OK;
}

const tj_val *tj_get(const tj_val *obj, const char *key)
{
    if (!obj || obj->type != TJ_OBJ) return NULL;
    for (const tj_val *k = obj->child; k; k = k->next)
        if (!strcmp(k->key, key)) return k;
    return NULL;
}
