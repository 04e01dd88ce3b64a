/* SPDX-License-Identifier: MIT */
/**
 * @file doc_codes.h
 * Code and comment agree, for any public header: doc_load() reads a
 * header of include/homa/, collects every HOMA_API function with the
 * HOMA_E* codes its doc comment names (plus those of the function its
 * "Return: as homa_x()" refers to); doc_check() runs a table of cases
 * (each drives one function into one documented error, or into its
 * documented answer to a misuse) and fails when a case returns
 * something else, returns a code its comment does not name, a documented
 * code is neither provoked nor accounted for elsewhere, a function has
 * no case at all, or a comment does not start with its function's name.
 * Used by tests/api (homa.h), tests/core (engine.h, wire.h), tests/crypto
 * (psp.h, encrypt.h) and tests/obs (obs.h).
 */
#ifndef HOMA_TEST_DOC_CODES_H
#define HOMA_TEST_DOC_CODES_H

#include <stdbool.h>
#include <stddef.h>

/** Most functions, and most codes of one function, a header may have. */
#define DOC_MAX_FNS 64
#define DOC_MAX_CODES 24

/**
 * One case: @run calls @fn and returns what it returned, to be compared
 * with @want. @code names @want ("HOMA_EINVAL"), or is "-" for a call
 * that returns no error code (a void function, a count, a bool): its
 * documented answer to the misuse is checked inside @run, which then
 * returns @want.
 */
struct doc_case {
	const char *fn;
	int want;
	const char *code;
	int (*run)(void);
};

/** DOC_CASE() - A case of @fn that must return @code. */
#define DOC_CASE(fn, code, run) {#fn, code, #code, run}
/** DOC_ANSWER() - A case of @fn that returns no code (@run returns 0 when it behaved). */
#define DOC_ANSWER(fn, run) {#fn, 0, "-", run}

/** A documented code no case provokes, and where it is covered (or why not). */
struct doc_elsewhere {
	const char *fn, *code, *where;  /**< @code "*": every code of @fn */
};

/** Documented codes of one function. */
struct doc_fn {
	char fn[64];
	char codes[DOC_MAX_CODES][24];
	int n;
	char as[64];     /**< "as homa_x()" in its Return: text, or "" */
	bool named;      /**< the comment starts with "fn() -" */
};

/** The functions of one header. */
struct doc_set {
	struct doc_fn fns[DOC_MAX_FNS];
	int n;
};

/**
 * doc_load() - Parse the header at @path into @d.
 * Return: the number of HOMA_API functions found, or -1 if @path cannot
 * be read.
 */
int doc_load(struct doc_set *d, const char *path);

/** doc_find() - The parsed comment of @fn in @d, or NULL. */
const struct doc_fn *doc_find(const struct doc_set *d, const char *fn);

/** doc_documents() - True if @fn's comment (or the one it refers to) names @code. */
bool doc_documents(const struct doc_set *d, const char *fn, const char *code);

/**
 * doc_check() - Run @n @cases against @d and check coverage with the
 * @nel entries of @el. Every failure is printed (print_error).
 * Return: the number of failures (0: code and comments agree).
 */
int doc_check(const struct doc_set *d, const struct doc_case *cases, size_t n,
	      const struct doc_elsewhere *el, size_t nel);

/** DOC_N() - Entries of a static table. */
#define DOC_N(a) (sizeof(a) / sizeof((a)[0]))

/**
 * doc_assert_header() - Load the header at @path (cmocka assertion: at
 * least @min functions) and assert that doc_check() of @cases and @el
 * against it finds nothing.
 */
void doc_assert_header(const char *path, int min, const struct doc_case *cases, size_t n,
		       const struct doc_elsewhere *el, size_t nel);

#endif /* HOMA_TEST_DOC_CODES_H */
