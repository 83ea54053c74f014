/* topo_findings.c - a list of findings (validation problems, later health
 * checks) and its text / JSON renderings. */
#include "tt_topo.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tt_findings_init(tt_findings *f) { memset(f, 0, sizeof *f); }

void tt_findings_free(tt_findings *f)
{
    free(f->items);
    memset(f, 0, sizeof *f);
}

tt_status tt_findings_add(tt_findings *f, tt_severity sev, const char *code, int line,
                          const char *where, const char *fmt, ...)
{
    tt_finding *it;
    va_list ap;

    if (!f || !code || !fmt)
        return tt_error_set(TT_ERR_INVALID, "tt_findings_add: NULL argument");
    if (sev < TT_SEV_INFO || sev > TT_SEV_ERROR)
        return tt_error_set(TT_ERR_INVALID, "tt_findings_add: bad severity %d", (int)sev);
    if (f->n == f->cap) {
        int ncap = f->cap ? f->cap * 2 : 16;
        tt_finding *p = realloc(f->items, (size_t)ncap * sizeof *p);
        if (!p)
            return tt_error_set(TT_ERR_NOMEM, "out of memory adding finding '%s'", code);
        f->items = p;
        f->cap = ncap;
    }
    it = &f->items[f->n];
    memset(it, 0, sizeof *it);
    it->severity = sev;
    it->line = line > 0 ? line : 0;
    snprintf(it->code, sizeof it->code, "%s", code);
    snprintf(it->where, sizeof it->where, "%s", where ? where : "");
    va_start(ap, fmt);
    vsnprintf(it->message, sizeof it->message, fmt, ap);
    va_end(ap);
    f->n++;
    return TT_OK;
}

int tt_findings_max_severity(const tt_findings *f)
{
    int i, m = -1;
    if (!f)
        return -1;
    for (i = 0; i < f->n; i++)
        if ((int)f->items[i].severity > m)
            m = (int)f->items[i].severity;
    return m;
}

const char *tt_severity_name(tt_severity s)
{
    switch (s) {
    case TT_SEV_INFO: return "info";
    case TT_SEV_WARN: return "warning";
    case TT_SEV_ERROR: return "error";
    }
    return "unknown";
}

tt_status tt_findings_write_text(const tt_findings *f, const char *source, tt_strbuf *out)
{
    int i;
    const char *src = (source && *source) ? source : "<input>";

    if (!f || !out)
        return tt_error_set(TT_ERR_INVALID, "tt_findings_write_text: NULL argument");
    for (i = 0; i < f->n; i++) {
        const tt_finding *it = &f->items[i];
        if (it->line > 0)
            tt_strbuf_printf(out, "%s:%d: ", src, it->line);
        else
            tt_strbuf_printf(out, "%s: ", src);
        tt_strbuf_printf(out, "%s: [%s] ", tt_severity_name(it->severity), it->code);
        if (it->where[0])
            tt_strbuf_printf(out, "%s: ", it->where);
        tt_strbuf_printf(out, "%s\n", it->message);
    }
    return tt_strbuf_status(out);
}


tt_status tt_findings_write_json(const tt_findings *f, const char *source, tt_strbuf *out)
{
    cJSON *root, *arr, *counts;
    char *text;
    int i, n[3] = { 0, 0, 0 };

    if (!f || !out)
        return tt_error_set(TT_ERR_INVALID, "tt_findings_write_json: NULL argument");
    root = cJSON_CreateObject();
    if (!root)
        return tt_error_set(TT_ERR_NOMEM, "out of memory writing findings JSON");
    cJSON_AddStringToObject(root, "schema", "topotune-findings");
    cJSON_AddNumberToObject(root, "version", 1);
    if (source)
        cJSON_AddStringToObject(root, "source", source);
    else
        cJSON_AddNullToObject(root, "source");
    arr = cJSON_AddArrayToObject(root, "findings");
    for (i = 0; arr && i < f->n; i++) {
        const tt_finding *it = &f->items[i];
        cJSON *o = cJSON_CreateObject();
        if (!o)
            break;
        cJSON_AddStringToObject(o, "severity", tt_severity_name(it->severity));
        cJSON_AddStringToObject(o, "code", it->code);
        if (it->line > 0)
            cJSON_AddNumberToObject(o, "line", it->line);
        else
            cJSON_AddNullToObject(o, "line");
        cJSON_AddStringToObject(o, "where", it->where);
        cJSON_AddStringToObject(o, "message", it->message);
        cJSON_AddItemToArray(arr, o);
        n[it->severity]++;
    }
    counts = cJSON_AddObjectToObject(root, "counts");
    if (counts) {
        cJSON_AddNumberToObject(counts, "error", n[TT_SEV_ERROR]);
        cJSON_AddNumberToObject(counts, "warning", n[TT_SEV_WARN]);
        cJSON_AddNumberToObject(counts, "info", n[TT_SEV_INFO]);
    }
    if (!arr || !counts || i < f->n) {
        cJSON_Delete(root);
        return tt_error_set(TT_ERR_NOMEM, "out of memory writing findings JSON");
    }
    text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text)
        return tt_error_set(TT_ERR_NOMEM, "out of memory writing findings JSON");
    tt_strbuf_append_json(out, text);
    free(text);
    return tt_strbuf_status(out);
}

int tt_findings_count(const tt_findings *f, tt_severity sev)
{
    int n = 0;
    for (int i = 0; i < f->n; i++) n += f->items[i].severity == sev;
    return n;
}
