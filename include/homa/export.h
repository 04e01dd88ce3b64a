/* SPDX-License-Identifier: MIT */
/**
 * @file export.h
 * HOMA_API marks a function of the public headers (the headers in include/homa/) as
 * part of the shared library's interface.
 *
 * libhoma.so is built with -fvisibility=hidden, so only the functions whose
 * declaration starts with HOMA_API are exported; everything else stays
 * private to the library. Every function declared in include/homa/ must
 * carry it (the package_exports test checks; scripts/homa-api.py adds it
 * where it is missing).
 */
#ifndef HOMA_EXPORT_H
#define HOMA_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define HOMA_API __attribute__((visibility("default")))
#else
#define HOMA_API
#endif

#endif /* HOMA_EXPORT_H */
