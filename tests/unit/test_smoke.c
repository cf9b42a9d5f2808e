#include "harness.h"
static void smoke(void)
{
	zcor *z = t_open();
	json_t *r = t_call(z, NULL, "zcor_memory_write", "{\"title\":\"北大\",\"content\":\"x\"}");
	CHECK_STR(t_str(r, "node.title"), "北大");
	json_decref(r);
	zcor_close(z);
}
const struct t_case t_cases[] = {{"smoke", smoke}, {0}};
