# The layering check (tools/check-layering.cmake): on this tree, with the
# manifest cmake/layering.cmake writes at configure time, and on a fixture
# tree that breaks each of its rules, where it must fail and say so.
add_test(NAME layering
         COMMAND ${CMAKE_COMMAND} -DMANIFEST=${PROJECT_BINARY_DIR}/layering_manifest.cmake
                 -P ${PROJECT_SOURCE_DIR}/tools/check-layering.cmake)
add_test(NAME layering_catches
         COMMAND ${CMAKE_COMMAND} -DCHECK=${PROJECT_SOURCE_DIR}/tools/check-layering.cmake
                 -DFIXTURE=${CMAKE_CURRENT_LIST_DIR}/fixtures/layering
                 -P ${CMAKE_CURRENT_LIST_DIR}/tools/layering_catches.cmake)
# Inside each module, no file calls back into one that calls it
# (tools/check-file-cycles.cmake, from the built archives).
add_test(NAME file_cycles
         COMMAND ${CMAKE_COMMAND} -DMANIFEST=${PROJECT_BINARY_DIR}/layering_manifest.cmake
                 -P ${PROJECT_SOURCE_DIR}/tools/check-file-cycles.cmake)
