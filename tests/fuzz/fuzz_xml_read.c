/* fuzz_xml_read.c - the hardened XML reader and both writers.
 *
 * For every input: tt_xml_read_buffer either fails with a message and no
 * document, or succeeds; then the native writer must succeed and be stable,
 * write(read(write(read(x)))) == write(read(x)), and the NCCL-dialect writer
 * either refuses (TT_ERR_LIMIT for NCCL's limits, TT_ERR_INVALID for a root
 * other than <system>, with a message) or writes a file that reads back and
 * writes again byte for byte.
 */
#include "fuzz_common.h"
#include "tt_xml.h"

static void fxr_limits(tt_xml_limits *lim)
{
    tt_xml_limits_default(lim);
    lim->max_nodes = 20000; /* keep one run fast; the limit code path is exercised anyway */
}

/* Read `text`, which a writer produced; it must parse. */
static tt_xml_doc *fxr_reread(const char *text, size_t len, const char *what)
{
    tt_xml_limits lim;
    tt_xml_doc *doc = NULL;
    tt_status st;
    fxr_limits(&lim);
    lim.max_bytes = (size_t)64 << 20; /* writer output may be larger than its input */
    st = tt_xml_read_buffer(text, len, "<rewrite>", &lim, &doc);
    FUZZ_CHECK(st == TT_OK && doc, "%s output does not read back: %s (%s)\n--- output ---\n%s", what,
               tt_status_name(st), tt_error_message(), text);
    return doc;
}

static void fxr_dialect(const tt_xml_doc *doc, tt_xml_dialect d)
{
    const char *what = d == TT_XML_NATIVE ? "native" : "nccl";
    char *w1 = NULL, *w2 = NULL;
    size_t l1 = 0, l2 = 0;
    tt_xml_doc *doc2;
    tt_status st = tt_xml_write_buffer(doc, d, &w1, &l1);

    if (st != TT_OK) {
        /* Only the NCCL dialect may refuse a tree: NCCL's limits (TT_ERR_LIMIT)
         * or a root other than <system> (TT_ERR_INVALID). */
        FUZZ_CHECK(d == TT_XML_NCCL && (st == TT_ERR_LIMIT || st == TT_ERR_INVALID),
                   "%s writer failed: %s (%s)", what,
                   tt_status_name(st), tt_error_message());
        FUZZ_CHECK(tt_error_message()[0] != '\0', "%s writer refused without a message", what);
        FUZZ_CHECK(w1 == NULL, "%s writer failed but returned a buffer", what);
        return;
    }
    FUZZ_CHECK(w1 && strlen(w1) == l1, "%s writer: length %zu does not match the text", what, l1);
    doc2 = fxr_reread(w1, l1, what);
    st = tt_xml_write_buffer(doc2, d, &w2, &l2);
    FUZZ_CHECK(st == TT_OK, "%s writer refused its own output: %s (%s)", what, tt_status_name(st),
               tt_error_message());
    FUZZ_CHECK(l1 == l2 && memcmp(w1, w2, l1) == 0,
               "%s writer not stable: write(read(w)) != w\n--- w ---\n%s\n--- write(read(w)) ---\n%s",
               what, w1, w2);
    free(w1);
    free(w2);
    tt_xml_doc_free(doc2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tt_xml_limits lim;
    tt_xml_doc *doc = NULL;
    tt_status st;

    fxr_limits(&lim);
    tt_error_clear();
    st = tt_xml_read_buffer((const char *)data, size, "<fuzz>", &lim, &doc);
    if (st != TT_OK) {
        FUZZ_CHECK(doc == NULL, "failed read returned a document");
        FUZZ_CHECK(tt_error_message()[0] != '\0', "read failed (%s) without a message",
                   tt_status_name(st));
        return 0;
    }
    FUZZ_CHECK(doc && doc->root, "successful read without a root element");
    FUZZ_CHECK(tt_xml_count(doc->root) <= lim.max_nodes, "node limit not enforced");
    fxr_dialect(doc, TT_XML_NATIVE);
    fxr_dialect(doc, TT_XML_NCCL);
    tt_xml_doc_free(doc);
    return 0;
}
