/*
 * topo_formats.c - the output formats of a topology, as one table that topo-dump (and any
 * library user) walks: name, one line of help, and the writer.  Adding a format is one writer
 * file (topo_view_<name>.c) and one line here (docs/contributing.md, "Adding an output format").
 * svg/png render the Graphviz drawing with Graphviz's own `dot` program (an external tool,
 * run with a 60 s limit; without it those two formats fail saying how to install it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "topo_internal.h"
#include "tt_topo.h"

static tt_status fmt_native(const tt_xml_doc *doc, const tt_topo *t, tt_strbuf *sb, char **out, size_t *len)
{
    (void)t; (void)sb;
    tt_xml_doc *native = NULL;
    tt_status st = tt_topo_to_native(doc, &native);
    if (st == TT_OK) st = tt_xml_write_buffer(native, TT_XML_NATIVE, out, len);
    tt_xml_doc_free(native);
    return st;
}

static tt_status fmt_nccl(const tt_xml_doc *doc, const tt_topo *t, tt_strbuf *sb, char **out, size_t *len)
{
    (void)t; (void)sb;
    return tt_xml_write_buffer(doc, TT_XML_NCCL, out, len);
}

static tt_status fmt_json(const tt_xml_doc *doc, const tt_topo *t, tt_strbuf *sb, char **out, size_t *len)
{
    (void)doc; (void)out; (void)len;
    return tt_topo_write_json(t, sb);
}

static tt_status fmt_dot(const tt_xml_doc *doc, const tt_topo *t, tt_strbuf *sb, char **out, size_t *len)
{
    (void)doc; (void)out; (void)len;
    return tt_topo_write_dot(t, sb);
}

static tt_status fmt_matrix(const tt_xml_doc *doc, const tt_topo *t, tt_strbuf *sb, char **out, size_t *len)
{
    (void)doc; (void)out; (void)len;
    return tt_topo_write_matrix(t, sb);
}

/* the drawing through Graphviz's dot -T<fmt> */
static tt_status render_dot(const char *dot_text, size_t dot_len, const char *fmt, char **out, size_t *out_len)
{
    char tmp[] = "/tmp/topo-dump-dot.XXXXXX";
    int fd = mkstemp(tmp);
    if (fd < 0)
        return tt_error_set(TT_ERR_IO, "cannot create a temporary file for Graphviz: %s", strerror(errno));
    FILE *f = fdopen(fd, "w");
    if (!f || fwrite(dot_text, 1, dot_len, f) != dot_len || fclose(f) != 0) {
        unlink(tmp);
        return tt_error_set(TT_ERR_IO, "cannot write the Graphviz input %s", tmp);
    }
    char cmd[256];
    snprintf(cmd, sizeof cmd, "timeout 60 dot -T%s '%s' 2>/dev/null", fmt, tmp);
    FILE *p = popen(cmd, "r");
    if (!p) {
        unlink(tmp);
        return tt_error_set(TT_ERR_SYSTEM, "cannot run Graphviz's dot: %s", strerror(errno));
    }
    tt_strbuf sb;
    tt_strbuf_init(&sb);
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, p)) > 0) tt_strbuf_appendn(&sb, chunk, n);
    int status = pclose(p);
    unlink(tmp);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (code != 0 || sb.len == 0) {
        tt_strbuf_free(&sb);
        if (code == 127)
            return tt_error_set(TT_ERR_UNSUPPORTED,
                                "--format %s needs Graphviz's dot program (Debian: apt-get install graphviz); "
                                "--format dot writes its input", fmt);
        return tt_error_set(TT_ERR_SYSTEM, "Graphviz's dot -T%s failed (exit %d)", fmt, code);
    }
    if (tt_strbuf_status(&sb) != TT_OK) {
        tt_strbuf_free(&sb);
        return TT_ERR_NOMEM;
    }
    *out = tt_strbuf_steal(&sb, out_len);
    return TT_OK;
}

static tt_status fmt_drawing(const char *fmt, const tt_topo *t, tt_strbuf *sb, char **out, size_t *len)
{
    tt_status st = tt_topo_write_dot(t, sb);
    if (st == TT_OK) st = tt_strbuf_status(sb);
    if (st == TT_OK) st = render_dot(sb->data, sb->len, fmt, out, len);
    return st;
}

static tt_status fmt_svg(const tt_xml_doc *doc, const tt_topo *t, tt_strbuf *sb, char **out, size_t *len)
{
    (void)doc;
    return fmt_drawing("svg", t, sb, out, len);
}

static tt_status fmt_png(const tt_xml_doc *doc, const tt_topo *t, tt_strbuf *sb, char **out, size_t *len)
{
    (void)doc;
    return fmt_drawing("png", t, sb, out, len);
}

/* A writer fills either *out (a buffer it made) or sb (text). */
typedef tt_status (*format_fn)(const tt_xml_doc *doc, const tt_topo *t, tt_strbuf *sb, char **out, size_t *len);

static const struct {
    tt_topo_format info;
    format_fn write;
} formats[] = {
    {{"native", "topotune XML, notes what is unknown"}, fmt_native},
    {{"nccl", "XML NCCL accepts as NCCL_TOPO_FILE"}, fmt_nccl},
    {{"json", "graph, links and GPU/NET paths (schema topotune-topology)"}, fmt_json},
    {{"dot", "Graphviz drawing (dot -Tsvg)"}, fmt_dot},
    {{"matrix", "GPU/NIC matrix like 'nvidia-smi topo -m'"}, fmt_matrix},
    {{"svg", "the drawing rendered (needs Graphviz's dot)"}, fmt_svg},
    {{"png", "the drawing rendered (needs Graphviz's dot)"}, fmt_png},
};

const tt_topo_format *tt_topo_format_at(int i)
{
    return i >= 0 && i < (int)(sizeof formats / sizeof formats[0]) ? &formats[i].info : NULL;
}

tt_status tt_topo_format_write(const char *name, const tt_xml_doc *doc, const tt_topo *t, char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        if (strcmp(name, formats[i].info.name)) continue;
        tt_strbuf sb;
        tt_strbuf_init(&sb);
        tt_status st = formats[i].write(doc, t, &sb, out, len);
        if (st == TT_OK && !*out) {
            if ((st = tt_strbuf_status(&sb)) == TT_OK) *out = tt_strbuf_steal(&sb, len);
            if (st == TT_OK && !*out) st = tt_error_set(TT_ERR_NOMEM, "out of memory formatting the output");
        }
        tt_strbuf_free(&sb);
        if (st != TT_OK) {
            free(*out);
            *out = NULL;
            *len = 0;
        }
        return st;
    }
    char list[200] = "";
    for (size_t i = 0, l = 0; i < sizeof formats / sizeof formats[0] && l < sizeof list; i++)
        l += (size_t)snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", formats[i].info.name);
    return tt_error_set(TT_ERR_INVALID, "unknown topology format '%s' (one of: %s)", name, list);
}
