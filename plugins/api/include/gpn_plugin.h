/*
 * gpn_plugin.h — the gp-learning-node model plugin ABI, version 1, for C and C++ authors.
 *
 * Hand-written to match the Rust crate gpn_plugin_api (plugins/api/src/abi.rs and
 * status.rs); plugins/api/tests/c_header.rs compiles this header and checks every
 * constant, size and field offset against the Rust side.
 *
 * A plugin is a shared library exporting ONE symbol:
 *
 *     GPN_EXPORT const gpn_plugin_table *gpn_plugin_entry(void);
 *
 * returning a pointer to a table with static storage duration. The host reads
 * abi_version and struct_size first and refuses the library unless abi_version ==
 * GPN_ABI_VERSION and struct_size >= GPN_TABLE_SIZE_MIN (the table as first published,
 * up to last_error). Within a major version the table only grows at its end; fields added
 * later (describe, config_schema, readiness, wait_ready) are optional and read only when
 * struct_size covers them. Every function pointer up to last_error is required; the later
 * ones may be NULL.
 *
 * Threading: a model may be created on one thread and used on another; the host never
 * calls two functions on the same model at the same time. create and last_error may run
 * concurrently on different threads.
 *
 * Errors: a function that fails returns a GPN_STATUS_* code other than GPN_STATUS_OK and
 * records a message that last_error(), called next on the SAME thread, copies out. No
 * C++ exception or longjmp may cross the boundary: catch everything and return
 * GPN_STATUS_PANIC (the host then only destroys the model).
 *
 * Real-time: update and predict run on the control thread: no blocking, no allocation in
 * steady state. Heavy work goes on the model's own thread, which destroy must join: the
 * host may unload the library as soon as destroy returns.
 */
#ifndef GPN_PLUGIN_H
#define GPN_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ABI version implemented by this header. */
#define GPN_ABI_VERSION 1u

/* Name of the entry symbol. */
#define GPN_PLUGIN_ENTRY_SYMBOL "gpn_plugin_entry"

/* Status codes (uint32_t). Zero is success; the others are categories. */
typedef uint32_t gpn_status;
#define GPN_STATUS_OK 0u                 /* success */
#define GPN_STATUS_INVALID_ARGUMENT 1u   /* null pointer, zero dimension, non-UTF-8 config */
#define GPN_STATUS_INVALID_CONFIG 2u     /* config rejected (not JSON, unknown key, range) */
#define GPN_STATUS_DIMENSION_MISMATCH 3u /* length differs from the model's dimensions */
#define GPN_STATUS_NON_FINITE 4u         /* NaN or infinity in x, y or noise_var */
#define GPN_STATUS_UNSUPPORTED 5u        /* function not implemented by this model */
#define GPN_STATUS_INVALID_STATE 6u      /* load: bytes corrupt or from another model/config */
#define GPN_STATUS_PANIC 7u              /* panic/exception caught; model unusable */
#define GPN_STATUS_INTERNAL 8u           /* any other failure */

/* Export attribute for the entry symbol. */
#if defined(_WIN32)
#define GPN_EXPORT __declspec(dllexport)
#elif defined(__GNUC__) || defined(__clang__)
#define GPN_EXPORT __attribute__((visibility("default")))
#else
#define GPN_EXPORT
#endif

/* An opaque model instance, owned by the plugin. */
typedef struct gpn_model gpn_model;

/* A UTF-8 string: pointer + length in bytes, NOT NUL-terminated. ptr may be NULL iff len == 0. */
typedef struct gpn_str {
    const char *ptr;
    size_t len;
} gpn_str;

/* Counters reported by stats. */
typedef struct gpn_stats {
    uint64_t samples_seen;   /* samples passed to update so far */
    uint64_t samples_stored; /* samples currently stored (after eviction) */
    uint64_t experts;        /* local experts / components in use (1 for a single model) */
    uint64_t memory_bytes;   /* bytes of model state held */
} gpn_stats;

/* Host-supplied sink for save: called with consecutive chunks of the state; the host
 * copies them. Returns GPN_STATUS_OK to continue; on anything else the plugin stops and
 * returns that code. */
typedef gpn_status (*gpn_write_fn)(void *ctx, const uint8_t *bytes, size_t len);

typedef struct gpn_plugin_table {
    /* Always first, in every ABI version. */
    uint32_t abi_version; /* = GPN_ABI_VERSION */
    uint32_t struct_size; /* = sizeof(gpn_plugin_table) */

    gpn_str name;        /* e.g. "rls_c" */
    gpn_str version;     /* e.g. "0.1.0" */
    gpn_str description; /* one line */

    /* Parse the JSON config (config_len bytes of UTF-8; config_len == 0 means "{}") and
     * create a model with input dimension input_dim and output dimension output_dim
     * (both >= 1). On success store it in *out_model; on failure leave *out_model NULL. */
    gpn_status (*create)(const uint8_t *config_json, size_t config_len, size_t input_dim,
                         size_t output_dim, gpn_model **out_model);

    /* Free the model and join every thread it started. NULL is a no-op. */
    void (*destroy)(gpn_model *model);

    /* Learn one sample: x[input_dim], y[output_dim], its time stamp in seconds, and the
     * noise variance of each output noise_var[output_dim]. */
    gpn_status (*update)(gpn_model *model, const double *x, const double *y, double t_secs,
                         const double *noise_var);

    /* Posterior mean and latent variance (noise not added) of every output at
     * x[input_dim] into mean_out[output_dim] and var_out[output_dim]. */
    gpn_status (*predict)(gpn_model *model, const double *x, double *mean_out, double *var_out);

    /* Fill *out with the model's counters. */
    gpn_status (*stats)(const gpn_model *model, gpn_stats *out);

    /* Serialise the learned state through write(ctx, ...). */
    gpn_status (*save)(const gpn_model *model, gpn_write_fn write, void *ctx);

    /* Replace the learned state with len bytes produced by save (same config and dims). */
    gpn_status (*load)(gpn_model *model, const uint8_t *bytes, size_t len);

    /* Copy the message of the most recent failing call made on the calling thread into
     * buf (at most cap bytes, UTF-8, cut at a character boundary, no NUL); return the
     * number of bytes written (0 if none). */
    size_t (*last_error)(uint8_t *buf, size_t cap);

    /* Added within ABI version 1 (optional; may be NULL): write model-specific diagnostics
     * as ONE UTF-8 JSON object through write(ctx, ...), as save does. Return
     * GPN_STATUS_UNSUPPORTED if the model has nothing to report. Not real-time. */
    gpn_status (*describe)(const gpn_model *model, gpn_write_fn write, void *ctx);

    /* Added within ABI version 1 after describe (optional; may be NULL): write the
     * plugin's configuration schema, {"keys": [{"name", "type", "default", "values",
     * "unit", "doc"}, ...]} (see plugins/api/src/config_schema.rs), as ONE UTF-8 JSON
     * object through write(ctx, ...). Takes no model: the host reads it before creating
     * one. Return GPN_STATUS_UNSUPPORTED if the plugin declares none. Not real-time. */
    gpn_status (*config_schema)(gpn_write_fn write, void *ctx);

    /* Added within ABI version 1 after config_schema (optional; may be NULL): what predict
     * answers from now. Write output_dim bytes to from_prior (1 where that output answers
     * from the prior or a data-free fallback alone, else 0) and, to *samples_behind, how
     * many samples given to update a background thread has not taken in yet (0 for a model
     * that learns in update). Return GPN_STATUS_UNSUPPORTED if the model does not say.
     * Real-time: no allocation, lock or I/O. */
    gpn_status (*readiness)(const gpn_model *model, uint8_t *from_prior, size_t output_dim,
                            uint64_t *samples_behind);

    /* Added within ABI version 1 after readiness (optional; may be NULL): block up to
     * timeout_ms until the background has taken in every sample given so far, adopting
     * what it published; return GPN_STATUS_OK also when the time ran out (the host asks
     * readiness). A model without background work returns at once. Not real-time. */
    gpn_status (*wait_ready)(gpn_model *model, uint64_t timeout_ms);
} gpn_plugin_table;

/* Smallest struct_size a version-1 host accepts: the table as first published, every
 * field up to last_error (120 bytes with 8-byte pointers). */
#define GPN_TABLE_SIZE_MIN ((uint32_t)offsetof(gpn_plugin_table, describe))

/* The one exported symbol; define it in your plugin with GPN_EXPORT. */
typedef const gpn_plugin_table *(*gpn_plugin_entry_fn)(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GPN_PLUGIN_H */
