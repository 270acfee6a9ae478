/*
 * blr.c — a gp-learning-node model plugin written in C: recursive Bayesian linear
 * regression, one posterior per output.
 *
 * Model, for each output o (features phi(x) = [1, x_1, ..., x_d], or just x without
 * the bias):   y_o = phi(x)^T w_o + e,  e ~ N(0, s2_o),  w_o ~ N(0, prior_var * I).
 * Each update is the exact rank-one (Kalman / recursive-least-squares) posterior update
 *     k = P phi / (s2 + phi^T P phi),   w += k (y - phi^T w),   P -= k (P phi)^T
 * optionally with exponential forgetting (P /= lambda first). predict returns the
 * posterior mean phi^T w_o and the latent variance phi^T P_o phi.
 *
 * Config (JSON object; every key optional):
 *   "prior_var"  > 0        prior variance of each weight            (default 1.0)
 *   "forgetting" in (0, 1]  lambda, 1 = no forgetting                (default 1.0)
 *   "noise_var"  > 0        fixed noise variance, overrides the per-sample noise_var
 *   "bias"       bool       include the constant feature             (default true)
 *
 * Build:  cc -std=c11 -O2 -fPIC -shared -fvisibility=hidden \
 *            -I ../api/include blr.c -o libblr_c.so -lm
 *
 * Real-time: all memory is allocated in create; update and predict do O(p * D^2) work
 * (D = d + 1) and never allocate.
 */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpn_plugin.h"

#define BLR_NAME "blr_c"
#define BLR_VERSION "0.1.0"
#define BLR_DESCRIPTION "Recursive Bayesian linear regression per output (C example plugin)"
static const char STATE_MAGIC[8] = {'G', 'P', 'N', 'B', 'L', 'R', '0', '1'};

/* ---------------------------------------------------------------- last error */

static _Thread_local char g_error[512];
static _Thread_local size_t g_error_len;

static gpn_status fail(gpn_status code, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    int n = vsnprintf(g_error, sizeof g_error, fmt, args);
    va_end(args);
    if (n < 0) {
        n = 0;
    }
    g_error_len = (size_t)n < sizeof g_error ? (size_t)n : sizeof g_error - 1;
    return code;
}

static size_t blr_last_error(uint8_t *buf, size_t cap) {
    if (buf == NULL || cap == 0) {
        return 0;
    }
    size_t n = g_error_len < cap ? g_error_len : cap;
    /* Cut at a UTF-8 character boundary: back off while the first byte left out is a
     * continuation byte (10xxxxxx). */
    while (n > 0 && n < g_error_len && ((unsigned char)g_error[n] & 0xC0u) == 0x80u) {
        n--;
    }
    memcpy(buf, g_error, n);
    return n;
}

/* ---------------------------------------------------------------- config */

typedef struct blr_config {
    double prior_var;
    double forgetting;
    double noise_var; /* <= 0: use the per-sample noise_var */
    bool bias;
} blr_config;

typedef struct cursor {
    const char *s;
    size_t len;
    size_t at;
} cursor;

static void skip_ws(cursor *c) {
    while (c->at < c->len && (c->s[c->at] == ' ' || c->s[c->at] == '\t' || c->s[c->at] == '\n' ||
                               c->s[c->at] == '\r')) {
        c->at++;
    }
}

static bool eat(cursor *c, char ch) {
    skip_ws(c);
    if (c->at < c->len && c->s[c->at] == ch) {
        c->at++;
        return true;
    }
    return false;
}

static bool eat_word(cursor *c, const char *word) {
    size_t n = strlen(word);
    if (c->len - c->at >= n && memcmp(c->s + c->at, word, n) == 0) {
        c->at += n;
        return true;
    }
    return false;
}

/* A JSON string without escapes (config keys need none) into key[cap]. */
static gpn_status parse_key(cursor *c, char *key, size_t cap) {
    if (!eat(c, '"')) {
        return fail(GPN_STATUS_INVALID_CONFIG, "config: expected a quoted key at byte %zu", c->at);
    }
    size_t n = 0;
    while (c->at < c->len && c->s[c->at] != '"') {
        if (c->s[c->at] == '\\' || n + 1 >= cap) {
            return fail(GPN_STATUS_INVALID_CONFIG, "config: unsupported key at byte %zu", c->at);
        }
        key[n++] = c->s[c->at++];
    }
    if (c->at >= c->len) {
        return fail(GPN_STATUS_INVALID_CONFIG, "config: unterminated key");
    }
    c->at++;
    key[n] = '\0';
    return GPN_STATUS_OK;
}

static gpn_status parse_number(cursor *c, const char *key, double *out) {
    skip_ws(c);
    char buf[64];
    size_t n = 0;
    while (c->at < c->len && n + 1 < sizeof buf && strchr("+-0123456789.eE", c->s[c->at]) != NULL) {
        buf[n++] = c->s[c->at++];
    }
    buf[n] = '\0';
    char *end = NULL;
    double v = n > 0 ? strtod(buf, &end) : 0.0;
    if (n == 0 || end != buf + n || !isfinite(v)) {
        return fail(GPN_STATUS_INVALID_CONFIG, "config: \"%s\" must be a number", key);
    }
    *out = v;
    return GPN_STATUS_OK;
}

static gpn_status parse_config(const uint8_t *json, size_t len, blr_config *cfg) {
    cfg->prior_var = 1.0;
    cfg->forgetting = 1.0;
    cfg->noise_var = 0.0;
    cfg->bias = true;
    if (len == 0) {
        return GPN_STATUS_OK;
    }
    cursor c = {(const char *)json, len, 0};
    if (!eat(&c, '{')) {
        return fail(GPN_STATUS_INVALID_CONFIG, "config: expected a JSON object");
    }
    bool first = true;
    while (!eat(&c, '}')) {
        if (!first && !eat(&c, ',')) {
            return fail(GPN_STATUS_INVALID_CONFIG, "config: expected ',' or '}' at byte %zu", c.at);
        }
        first = false;
        char key[32];
        gpn_status st = parse_key(&c, key, sizeof key);
        if (st != GPN_STATUS_OK) {
            return st;
        }
        if (!eat(&c, ':')) {
            return fail(GPN_STATUS_INVALID_CONFIG, "config: expected ':' after \"%s\"", key);
        }
        skip_ws(&c);
        if (strcmp(key, "bias") == 0) {
            if (eat_word(&c, "true")) {
                cfg->bias = true;
            } else if (eat_word(&c, "false")) {
                cfg->bias = false;
            } else {
                return fail(GPN_STATUS_INVALID_CONFIG, "config: \"bias\" must be true or false");
            }
            continue;
        }
        double v = 0.0;
        double *slot = NULL;
        if (strcmp(key, "prior_var") == 0) {
            slot = &cfg->prior_var;
        } else if (strcmp(key, "forgetting") == 0) {
            slot = &cfg->forgetting;
        } else if (strcmp(key, "noise_var") == 0) {
            slot = &cfg->noise_var;
        } else {
            return fail(GPN_STATUS_INVALID_CONFIG,
                        "config: unknown key \"%s\" (known: prior_var, forgetting, noise_var, bias)", key);
        }
        st = parse_number(&c, key, &v);
        if (st != GPN_STATUS_OK) {
            return st;
        }
        *slot = v;
    }
    skip_ws(&c);
    if (c.at != c.len) {
        return fail(GPN_STATUS_INVALID_CONFIG, "config: trailing characters at byte %zu", c.at);
    }
    if (!(cfg->prior_var > 0.0)) {
        return fail(GPN_STATUS_INVALID_CONFIG, "config: prior_var must be > 0, got %g", cfg->prior_var);
    }
    if (!(cfg->forgetting > 0.0 && cfg->forgetting <= 1.0)) {
        return fail(GPN_STATUS_INVALID_CONFIG, "config: forgetting must be in (0, 1], got %g", cfg->forgetting);
    }
    if (cfg->noise_var < 0.0) {
        return fail(GPN_STATUS_INVALID_CONFIG, "config: noise_var must be > 0, got %g", cfg->noise_var);
    }
    return GPN_STATUS_OK;
}

/* ---------------------------------------------------------------- the model */

struct gpn_model {
    blr_config cfg;
    size_t d;       /* input dimension */
    size_t p;       /* outputs */
    size_t dim;     /* features D = d (+ 1 with bias) */
    uint64_t seen;  /* samples passed to update */
    double *w;      /* p x D posterior means */
    double *P;      /* p x D x D posterior covariances */
    double *phi;    /* D scratch: features */
    double *Pphi;   /* D scratch: P phi */
    size_t bytes;   /* total bytes allocated */
};

static void features(const gpn_model *m, const double *x, double *phi) {
    size_t k = 0;
    if (m->cfg.bias) {
        phi[k++] = 1.0;
    }
    for (size_t i = 0; i < m->d; i++) {
        phi[k++] = x[i];
    }
}

static void reset_posterior(gpn_model *m) {
    size_t D = m->dim;
    memset(m->w, 0, m->p * D * sizeof(double));
    memset(m->P, 0, m->p * D * D * sizeof(double));
    for (size_t o = 0; o < m->p; o++) {
        for (size_t i = 0; i < D; i++) {
            m->P[o * D * D + i * D + i] = m->cfg.prior_var;
        }
    }
    m->seen = 0;
}

static gpn_status blr_create(const uint8_t *config_json, size_t config_len, size_t input_dim,
                             size_t output_dim, gpn_model **out_model) {
    if (out_model == NULL) {
        return fail(GPN_STATUS_INVALID_ARGUMENT, "create: out_model is null");
    }
    *out_model = NULL;
    if (input_dim == 0 || output_dim == 0 || input_dim > 4096 || output_dim > 4096) {
        return fail(GPN_STATUS_INVALID_ARGUMENT, "create: dimensions must be in 1..=4096, got %zu and %zu",
                    input_dim, output_dim);
    }
    if (config_len > 0 && config_json == NULL) {
        return fail(GPN_STATUS_INVALID_ARGUMENT, "create: config_json is null");
    }
    blr_config cfg;
    gpn_status st = parse_config(config_json, config_len, &cfg);
    if (st != GPN_STATUS_OK) {
        return st;
    }
    gpn_model *m = calloc(1, sizeof *m);
    if (m == NULL) {
        return fail(GPN_STATUS_INTERNAL, "create: out of memory");
    }
    m->cfg = cfg;
    m->d = input_dim;
    m->p = output_dim;
    m->dim = input_dim + (cfg.bias ? 1 : 0);
    size_t D = m->dim;
    m->w = calloc(output_dim * D, sizeof(double));
    m->P = calloc(output_dim * D * D, sizeof(double));
    m->phi = calloc(D, sizeof(double));
    m->Pphi = calloc(D, sizeof(double));
    if (m->w == NULL || m->P == NULL || m->phi == NULL || m->Pphi == NULL) {
        free(m->w);
        free(m->P);
        free(m->phi);
        free(m->Pphi);
        free(m);
        return fail(GPN_STATUS_INTERNAL, "create: out of memory");
    }
    m->bytes = sizeof *m + (output_dim * D + output_dim * D * D + 2 * D) * sizeof(double);
    reset_posterior(m);
    *out_model = m;
    return GPN_STATUS_OK;
}

static void blr_destroy(gpn_model *m) {
    if (m == NULL) {
        return;
    }
    free(m->w);
    free(m->P);
    free(m->phi);
    free(m->Pphi);
    free(m);
}

static gpn_status check_finite(const char *fn, const char *what, const double *v, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(v[i])) {
            return fail(GPN_STATUS_NON_FINITE, "%s: %s contains a non-finite value at index %zu", fn, what, i);
        }
    }
    return GPN_STATUS_OK;
}

static gpn_status blr_update(gpn_model *m, const double *x, const double *y, double t_secs,
                             const double *noise_var) {
    (void)t_secs; /* stationary model: time stamps are not used */
    if (m == NULL || x == NULL || y == NULL || noise_var == NULL) {
        return fail(GPN_STATUS_INVALID_ARGUMENT, "update: null argument");
    }
    gpn_status st = check_finite("update", "x", x, m->d);
    if (st == GPN_STATUS_OK) st = check_finite("update", "y", y, m->p);
    if (st == GPN_STATUS_OK) st = check_finite("update", "noise_var", noise_var, m->p);
    if (st != GPN_STATUS_OK) {
        return st;
    }
    if (m->cfg.noise_var <= 0.0) {
        for (size_t o = 0; o < m->p; o++) {
            if (!(noise_var[o] > 0.0)) {
                return fail(GPN_STATUS_INVALID_ARGUMENT, "update: noise_var[%zu] must be > 0, got %g", o,
                            noise_var[o]);
            }
        }
    }
    size_t D = m->dim;
    double *phi = m->phi;
    double *Pphi = m->Pphi;
    features(m, x, phi);
    for (size_t o = 0; o < m->p; o++) {
        double *w = m->w + o * D;
        double *P = m->P + o * D * D;
        double s2 = m->cfg.noise_var > 0.0 ? m->cfg.noise_var : noise_var[o];
        if (m->cfg.forgetting < 1.0) {
            for (size_t i = 0; i < D * D; i++) {
                P[i] /= m->cfg.forgetting;
            }
        }
        double quad = 0.0;
        double pred = 0.0;
        for (size_t i = 0; i < D; i++) {
            double acc = 0.0;
            for (size_t j = 0; j < D; j++) {
                acc += P[i * D + j] * phi[j];
            }
            Pphi[i] = acc;
            quad += phi[i] * acc;
            pred += phi[i] * w[i];
        }
        double s = s2 + quad;
        double err = y[o] - pred;
        for (size_t i = 0; i < D; i++) {
            w[i] += Pphi[i] / s * err;
        }
        for (size_t i = 0; i < D; i++) {
            for (size_t j = 0; j < D; j++) {
                P[i * D + j] -= Pphi[i] * Pphi[j] / s;
            }
        }
        /* Keep P exactly symmetric against rounding drift. */
        for (size_t i = 0; i < D; i++) {
            for (size_t j = i + 1; j < D; j++) {
                double avg = 0.5 * (P[i * D + j] + P[j * D + i]);
                P[i * D + j] = avg;
                P[j * D + i] = avg;
            }
        }
    }
    m->seen++;
    return GPN_STATUS_OK;
}

static gpn_status blr_predict(gpn_model *m, const double *x, double *mean_out, double *var_out) {
    if (m == NULL || x == NULL || mean_out == NULL || var_out == NULL) {
        return fail(GPN_STATUS_INVALID_ARGUMENT, "predict: null argument");
    }
    gpn_status st = check_finite("predict", "x", x, m->d);
    if (st != GPN_STATUS_OK) {
        return st;
    }
    size_t D = m->dim;
    double *phi = m->phi;
    features(m, x, phi);
    for (size_t o = 0; o < m->p; o++) {
        const double *w = m->w + o * D;
        const double *P = m->P + o * D * D;
        double mean = 0.0;
        double var = 0.0;
        for (size_t i = 0; i < D; i++) {
            mean += phi[i] * w[i];
            double acc = 0.0;
            for (size_t j = 0; j < D; j++) {
                acc += P[i * D + j] * phi[j];
            }
            var += phi[i] * acc;
        }
        mean_out[o] = mean;
        var_out[o] = var > 0.0 ? var : 0.0;
    }
    return GPN_STATUS_OK;
}

static gpn_status blr_stats(const gpn_model *m, gpn_stats *out) {
    if (m == NULL || out == NULL) {
        return fail(GPN_STATUS_INVALID_ARGUMENT, "stats: null argument");
    }
    out->samples_seen = m->seen;
    out->samples_stored = 0; /* parametric: no samples kept */
    out->experts = 1;
    out->memory_bytes = m->bytes;
    return GPN_STATUS_OK;
}

/* ---------------------------------------------------------------- save / load */
/* Layout, little-endian: magic[8], u64 d, u64 p, u64 D, u64 bias, u64 seen,
 * then p*D doubles w, then p*D*D doubles P (IEEE-754 bits). */

typedef struct writer {
    gpn_write_fn write;
    void *ctx;
    uint8_t buf[512];
    size_t len;
    gpn_status status;
} writer;

static void flush(writer *wr) {
    if (wr->status == GPN_STATUS_OK && wr->len > 0) {
        wr->status = wr->write(wr->ctx, wr->buf, wr->len);
    }
    wr->len = 0;
}

static void put_u64(writer *wr, uint64_t v) {
    if (wr->len + 8 > sizeof wr->buf) {
        flush(wr);
    }
    for (int i = 0; i < 8; i++) {
        wr->buf[wr->len++] = (uint8_t)(v >> (8 * i));
    }
}

static void put_f64(writer *wr, double v) {
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    put_u64(wr, bits);
}

static uint64_t get_u64(const uint8_t *b) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) {
        v |= (uint64_t)b[i] << (8 * i);
    }
    return v;
}

static double get_f64(const uint8_t *b) {
    uint64_t bits = get_u64(b);
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

static gpn_status blr_save(const gpn_model *m, gpn_write_fn write, void *ctx) {
    if (m == NULL || write == NULL) {
        return fail(GPN_STATUS_INVALID_ARGUMENT, "save: null argument");
    }
    writer wr = {.write = write, .ctx = ctx, .len = 0, .status = GPN_STATUS_OK};
    memcpy(wr.buf, STATE_MAGIC, sizeof STATE_MAGIC);
    wr.len = sizeof STATE_MAGIC;
    put_u64(&wr, m->d);
    put_u64(&wr, m->p);
    put_u64(&wr, m->dim);
    put_u64(&wr, m->cfg.bias ? 1 : 0);
    put_u64(&wr, m->seen);
    size_t D = m->dim;
    for (size_t i = 0; i < m->p * D; i++) {
        put_f64(&wr, m->w[i]);
    }
    for (size_t i = 0; i < m->p * D * D; i++) {
        put_f64(&wr, m->P[i]);
    }
    flush(&wr);
    if (wr.status != GPN_STATUS_OK) {
        return fail(wr.status, "save: the host's writer refused the state");
    }
    return GPN_STATUS_OK;
}

static gpn_status blr_load(gpn_model *m, const uint8_t *bytes, size_t len) {
    if (m == NULL || (bytes == NULL && len > 0)) {
        return fail(GPN_STATUS_INVALID_ARGUMENT, "load: null argument");
    }
    size_t D = m->dim;
    size_t want = sizeof STATE_MAGIC + 5 * 8 + (m->p * D + m->p * D * D) * 8;
    if (len < sizeof STATE_MAGIC || memcmp(bytes, STATE_MAGIC, sizeof STATE_MAGIC) != 0) {
        return fail(GPN_STATUS_INVALID_STATE, "load: not a blr_c state (bad magic)");
    }
    if (len != want) {
        return fail(GPN_STATUS_INVALID_STATE, "load: state has %zu bytes, this model needs %zu", len, want);
    }
    const uint8_t *b = bytes + sizeof STATE_MAGIC;
    if (get_u64(b) != m->d || get_u64(b + 8) != m->p || get_u64(b + 16) != D ||
        get_u64(b + 24) != (m->cfg.bias ? 1u : 0u)) {
        return fail(GPN_STATUS_INVALID_STATE, "load: state is for other dimensions or features");
    }
    const uint8_t *data = b + 40;
    for (size_t i = 0; i < m->p * D + m->p * D * D; i++) {
        if (!isfinite(get_f64(data + 8 * i))) {
            return fail(GPN_STATUS_INVALID_STATE, "load: state contains a non-finite value");
        }
    }
    m->seen = get_u64(b + 32);
    for (size_t i = 0; i < m->p * D; i++) {
        m->w[i] = get_f64(data + 8 * i);
    }
    data += 8 * m->p * D;
    for (size_t i = 0; i < m->p * D * D; i++) {
        m->P[i] = get_f64(data + 8 * i);
    }
    return GPN_STATUS_OK;
}

/* ------------------------------------------------------------------- describe */

/* Diagnostics as one JSON object: sizes, samples seen, the configuration and the posterior
 * mean weights of output 0 (optional table field, added within ABI version 1). */
static gpn_status blr_describe(const gpn_model *m, gpn_write_fn write, void *ctx) {
    if (m == NULL || write == NULL) {
        return fail(GPN_STATUS_INVALID_ARGUMENT, "describe: null argument");
    }
    char text[1024];
    int n = snprintf(text, sizeof text,
                     "{\"model\":\"%s\",\"samples_seen\":%llu,\"inputs\":%zu,\"outputs\":%zu,"
                     "\"prior_var\":%.17g,\"forgetting\":%.17g,\"bias\":%s,\"weights_0\":[",
                     BLR_NAME, (unsigned long long)m->seen, m->d, m->p, m->cfg.prior_var,
                     m->cfg.forgetting, m->cfg.bias ? "true" : "false");
    size_t len = n > 0 ? (size_t)n : 0;
    for (size_t i = 0; i < m->dim && len < sizeof text - 32; i++) {
        n = snprintf(text + len, sizeof text - len, "%s%.17g", i > 0 ? "," : "", m->w[i]);
        len += n > 0 ? (size_t)n : 0;
    }
    if (len >= sizeof text - 3) {
        return fail(GPN_STATUS_INTERNAL, "describe: too many inputs to describe");
    }
    memcpy(text + len, "]}", 2);
    len += 2;
    gpn_status code = write(ctx, (const uint8_t *)text, len);
    if (code != GPN_STATUS_OK) {
        return fail(code, "describe: the host's writer refused %zu bytes", len);
    }
    return GPN_STATUS_OK;
}

/* ------------------------------------------------------------------ readiness */

/* Every output answers from the prior until the first sample; BLR learns in update, so it
 * is never behind (optional table field, added within ABI version 1; real-time). */
static gpn_status blr_readiness(const gpn_model *m, uint8_t *from_prior, size_t output_dim,
                                uint64_t *samples_behind) {
    if (m == NULL || from_prior == NULL || samples_behind == NULL) {
        return fail(GPN_STATUS_INVALID_ARGUMENT, "readiness: null argument");
    }
    if (output_dim != m->p) {
        return fail(GPN_STATUS_DIMENSION_MISMATCH, "readiness: output_dim %zu, the model has %zu",
                    output_dim, m->p);
    }
    memset(from_prior, m->seen == 0 ? 1 : 0, output_dim);
    *samples_behind = 0;
    return GPN_STATUS_OK;
}

/* ---------------------------------------------------------------- the table */

static const gpn_plugin_table TABLE = {
    .abi_version = GPN_ABI_VERSION,
    .struct_size = (uint32_t)sizeof(gpn_plugin_table),
    .name = {BLR_NAME, sizeof BLR_NAME - 1},
    .version = {BLR_VERSION, sizeof BLR_VERSION - 1},
    .description = {BLR_DESCRIPTION, sizeof BLR_DESCRIPTION - 1},
    .create = blr_create,
    .destroy = blr_destroy,
    .update = blr_update,
    .predict = blr_predict,
    .stats = blr_stats,
    .save = blr_save,
    .load = blr_load,
    .last_error = blr_last_error,
    .describe = blr_describe,
    .readiness = blr_readiness,
    /* No wait_ready: nothing runs in the background. */
};

GPN_EXPORT const gpn_plugin_table *gpn_plugin_entry(void) { return &TABLE; }
