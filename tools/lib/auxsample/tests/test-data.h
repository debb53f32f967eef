/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The shared data the tests read (../shared/data: real traces recorded by
 * others, and inputs that crashed or hung a decoder), and a memory reader
 * that reads nothing (test-data.c).
 */
#ifndef __AUXSAMPLE_TESTS_TEST_DATA_H
#define __AUXSAMPLE_TESTS_TEST_DATA_H

#include <stddef.h>
#include <stdint.h>

/* $AUXSAMPLE_DATA, else ../shared/data */
const char *data_dir(void);
/*
 * The whole file at @path, malloc()ed and NUL-terminated, its size in
 * *@size; NULL if unreadable.
 */
uint8_t *read_path(const char *path, size_t *size);
/* The same for @name under data_dir(). */
uint8_t *read_data(const char *name, size_t *size);
/* An auxsample_read_memory_fn that reads no code: an image's files are all there is. */
int read_nothing(uint8_t *buf, size_t size, uint64_t addr, void *context);

#endif /* __AUXSAMPLE_TESTS_TEST_DATA_H */
