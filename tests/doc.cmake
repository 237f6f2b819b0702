# Suite of the document module (YAML/JSON trees); links json-c to check
# that what doc_emit_json() prints is JSON to another reader too.
dt_add_suite(test_doc SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_doc.c
             LIBS dt_doc PkgConfig::JSONC)

# fuzz_doc: libFuzzer over the readers and printers (clang only). The
# module's sources are compiled into it so that they carry the fuzzer's
# coverage instrumentation without changing dt_doc for everyone else.
if(DRATOPO_FUZZ)
  # SOURCES holds names relative to the module's folder.
  get_target_property(_doc_srcs dt_doc SOURCES)
  get_target_property(_doc_dir dt_doc SOURCE_DIR)
  list(TRANSFORM _doc_srcs PREPEND ${_doc_dir}/)
  add_executable(fuzz_doc ${CMAKE_CURRENT_LIST_DIR}/fuzz/fuzz_doc.c ${_doc_srcs})
  target_include_directories(fuzz_doc PRIVATE ${PROJECT_SOURCE_DIR}/common/doc
                             ${PROJECT_SOURCE_DIR}/common/doc/internal)
  target_compile_options(fuzz_doc PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_options(fuzz_doc PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(fuzz_doc PRIVATE dt_base PkgConfig::YAML m)
  set_target_properties(fuzz_doc PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
endif()

# The fast YAML reader against libyaml, over every YAML file of the tree.
dt_add_suite(test_doc_fast SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_doc_fast.c
             LIBS dt_doc INTERNAL common/doc)
