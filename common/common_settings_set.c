/*
 * common_settings_set.c - a front end's value of a setting for this process (tt_setting_set) and the
 * check of every typed row of the settings table (tt_settings_check: one message per variable).
 * The table and the reads are common_settings.c.
 */
#include "common_internal.h"
#include "tt_common.h"

#include <stdint.h>
#include <string.h>

tt_status tt_setting_set(const char *name, const char *value)
{
    const tt_setting_info *s = tt_setting_lookup(name);
    if (!s)
        return tt_error_set(TT_ERR_INVALID, "tt_setting_set: '%s' is not a topotune setting", name ? name : "(null)");
    char *copy = NULL;
    if (value && !(copy = tt_strdup(value)))
        return tt_error_set(TT_ERR_NOMEM, "tt_setting_set: out of memory");
    common_setting_store(s, copy);
    return TT_OK;
}

/* 1 when the value s is acceptable for the typed row t */
static int value_ok(const tt_setting_info *t, const char *s)
{
    if (t->type == TT_SETTING_INT) {
        long long v;
        return tt_parse_ll(s, &v) == TT_OK && v >= t->lo && v <= t->hi;
    }
    if (t->type == TT_SETTING_SIZE || t->type == TT_SETTING_SIZE_POW2) {
        uint64_t v;
        return tt_parse_size(s, &v) == TT_OK && v >= (uint64_t)t->lo && v <= (uint64_t)t->hi &&
               !(t->type == TT_SETTING_SIZE_POW2 && (v & (v - 1)));
    }
    if (t->type == TT_SETTING_CHOICE) { /* t->accepted: "a, b or c" */
        size_t n = strlen(s);
        if (strpbrk(s, ", "))
            return 0;
        for (const char *p = t->accepted; (p = strstr(p, s)) != NULL; p += n) {
            int starts = p == t->accepted || p[-1] == ' ';
            int ends = p[n] == '\0' || p[n] == ',' || p[n] == ' ';
            if (starts && ends && n && strcmp(s, "or"))
                return 1;
        }
        return 0;
    }
    return 1;
}

tt_status tt_settings_check(void)
{
    size_t n;
    const tt_setting_info *table = tt_settings_table(&n);
    for (size_t i = 0; i < n; i++) {
        const tt_setting_info *t = &table[i];
        if (t->type == TT_SETTING_TEXT || t->type == TT_SETTING_TEST)
            continue;
        const char *s = tt_setting(t->name);
        if (s && *s && !value_ok(t, s))
            return tt_error_set(TT_ERR_INVALID, "%s='%.80s': must be %s (unset it for the default)", t->name, s,
                                t->accepted);
    }
    return TT_OK;
}
