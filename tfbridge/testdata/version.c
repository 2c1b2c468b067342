// Prints TF_Version(): built by TestSetupScript against a generated
// tensorflow.pc and run without LD_LIBRARY_PATH, to check the rpath.
#include <stdio.h>
#include <tensorflow/c/c_api.h>

int main(void) {
  printf("%s\n", TF_Version());
  return 0;
}
