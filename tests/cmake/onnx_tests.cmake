# ONNX import: the executor's unit tests, and the conformance run over the ONNX backend test data
# that Debian's libonnx-testdata installs (.ci/run installs the package).
#
#   onnx_unit         unit_onnx/test_onnx.cpp: hand-derived graphs, ONNX-ML against scikit-learn
#                     numbers, every typed error; unit_onnx/test_onnx_export.cpp: every exported
#                     model passes the checker and predicts as onelearn does, in onelearn's
#                     executor and in onnxruntime (Node; skipped, saying why, without it);
#                     unit_onnx/test_onnx_import_estimators.cpp: ONNX-ML files (onelearn's and
#                     skl2onnx's layouts) become fitted estimators; unit_onnx/test_onnx_nn.cpp:
#                     nn::Sequential exported (checked in onnxruntime), read back, and PyTorch's
#                     exports imported as trainable Sequentials and fine-tuned
#   onnx_conformance  onelearn-onnx check over every node/test_* folder (folders with an operator
#                     or a data type outside the supported list are reported as skipped) and the
#                     PyTorch-exported models of issue 6; any failure fails the test, and so does
#                     a listed PyTorch model being skipped
#
# Include after tools/ has been added (the test runs the onelearn-onnx target).
if(NOT TARGET onelearn::onnx)
  message(STATUS "ONNX tests not built: ONNX (libonnx-dev) was not found")
  return()
endif()

add_executable(onelearn_onnx_tests
  "${CMAKE_CURRENT_SOURCE_DIR}/unit_onnx/test_onnx.cpp"
  "${CMAKE_CURRENT_SOURCE_DIR}/unit_onnx/test_onnx_export.cpp"
  "${CMAKE_CURRENT_SOURCE_DIR}/unit_onnx/test_onnx_import_estimators.cpp"
  "${CMAKE_CURRENT_SOURCE_DIR}/unit_onnx/test_onnx_nn.cpp"
  "${CMAKE_CURRENT_SOURCE_DIR}/unit/main.cpp")
target_link_libraries(onelearn_onnx_tests PRIVATE onelearn_test_support onelearn::onnx)
add_test(NAME onnx_unit COMMAND onelearn_onnx_tests)
set_tests_properties(onnx_unit PROPERTIES LABELS "unit;onnx" TIMEOUT 300)

if(NOT TARGET onelearn-onnx)
  return()
endif()
set(ONELEARN_ONNX_TESTDATA_DIR "/usr/share/libonnx-testdata/data"
    CACHE PATH "ONNX backend test data (Debian package libonnx-testdata)")
set(onelearn_onnx_pytorch_patterns
  test_Linear test_Linear_no_bias test_ReLU test_LeakyReLU* test_ELU test_SELU test_PReLU_*
  test_Sigmoid test_Tanh test_Softmax test_LogSoftmax test_Softplus test_Softsign test_Conv2d*
  test_MaxPool2d* test_AvgPool2d* test_BatchNorm2d*)
set(onelearn_onnx_pytorch_folders)
foreach(pattern IN LISTS onelearn_onnx_pytorch_patterns)
  file(GLOB matched LIST_DIRECTORIES true
       "${ONELEARN_ONNX_TESTDATA_DIR}/pytorch-converted/${pattern}")
  list(APPEND onelearn_onnx_pytorch_folders ${matched})
endforeach()

add_test(NAME onnx_conformance
  COMMAND onelearn-onnx check "${ONELEARN_ONNX_TESTDATA_DIR}/node" ${onelearn_onnx_pytorch_folders})
set_tests_properties(onnx_conformance PROPERTIES
  LABELS onnx TIMEOUT 600
  # The listed PyTorch models use only supported operators: a skip there is a regression.
  FAIL_REGULAR_EXPRESSION "pytorch-converted/[^:\n]*: skipped")
if(NOT IS_DIRECTORY "${ONELEARN_ONNX_TESTDATA_DIR}/node" OR NOT onelearn_onnx_pytorch_folders)
  message(STATUS "onnx_conformance disabled: no ONNX backend test data in "
                 "${ONELEARN_ONNX_TESTDATA_DIR} (apt-get install libonnx-testdata)")
  set_tests_properties(onnx_conformance PROPERTIES DISABLED TRUE)
endif()
