/* SPDX-License-Identifier: MIT */
/* Tests for util/json.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "homa/errors.h"
#include "util/json.h"

/** A nested document comes out compact, escaped, with nulls for NaN. */
static void homa_json_finish__nested_document(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct homa_json j;

	homa_json_init(&j, f, false);
	homa_json_object(&j);
	homa_json_kv_str(&j, "scenario", "rtt \"x\"\n");
	homa_json_key(&j, "homa");
	homa_json_object(&j);
	homa_json_kv_num(&j, "p50_us", 12.5);
	homa_json_kv_num(&j, "bad", NAN);
	homa_json_end(&j);
	homa_json_key(&j, "list");
	homa_json_array(&j);
	homa_json_int(&j, -3);
	homa_json_bool(&j, true);
	homa_json_null(&j);
	homa_json_array(&j);
	homa_json_end(&j);
	homa_json_end(&j);
	homa_json_end(&j);
	assert_int_equal(homa_json_finish(&j), 0);
	fclose(f);
	assert_string_equal(buf, "{\"scenario\":\"rtt \\\"x\\\"\\n\",\"homa\":{\"p50_us\":12.5,"
				 "\"bad\":null},\"list\":[-3,true,null,[]]}\n");
	free(buf);
}

/** Misuse is remembered and reported by finish. */
static void homa_json_finish__misuse(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct homa_json j;

	homa_json_init(&j, f, false);
	homa_json_object(&j);
	homa_json_num(&j, 1); /* value without key */
	assert_int_equal(homa_json_finish(&j), HOMA_EINVAL);

	homa_json_init(&j, f, false);
	homa_json_object(&j);
	assert_int_equal(homa_json_finish(&j), HOMA_EINVAL); /* unclosed */

	homa_json_init(&j, f, false);
	homa_json_array(&j);
	homa_json_key(&j, "k"); /* key in an array */
	assert_int_equal(homa_json_finish(&j), HOMA_EINVAL);

	homa_json_init(&j, f, false);
	homa_json_end(&j); /* nothing open */
	assert_int_equal(homa_json_finish(&j), HOMA_EINVAL);

	homa_json_init(&j, f, false);
	for (int i = 0; i < HOMA_JSON_DEPTH + 2; i++)
		homa_json_array(&j);
	assert_int_equal(homa_json_finish(&j), HOMA_EINVAL);
	fclose(f);
	free(buf);
}

/** Pretty mode indents items on their own lines. */
static void homa_json_init__pretty(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct homa_json j;

	homa_json_init(&j, f, true);
	homa_json_object(&j);
	homa_json_kv_num(&j, "a", 1);
	homa_json_end(&j);
	assert_int_equal(homa_json_finish(&j), 0);
	fclose(f);
	assert_string_equal(buf, "{\n  \"a\": 1\n}\n");
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_json_finish__nested_document),
		cmocka_unit_test(homa_json_finish__misuse),
		cmocka_unit_test(homa_json_init__pretty),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
