/* not_kiln.c - a shared library that is not a Kiln model, for the runtime's error path.
 */
__attribute__((visibility("default"))) int not_kiln_answer(void) { return 42; }
