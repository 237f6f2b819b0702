# Tests of deploy/ and systemd/: deploy_check parses every manifest and checks
# kinds, required fields and cross-references; the script adds the security
# properties and systemd-analyze verify.
add_executable(deploy_check ${CMAKE_CURRENT_LIST_DIR}/tools/deploy_check.c)
target_link_libraries(deploy_check PRIVATE dt_doc dt_base)
set_target_properties(deploy_check PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
add_test(NAME deploy_e2e COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/e2e/deploy.sh ${PROJECT_BINARY_DIR}
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(deploy_e2e PROPERTIES TIMEOUT 120)
# deploy/Dockerfile and tools/dev agree on the one package list (the
# debootstrap run of the Dockerfile is `tools/dev image-check`, by hand).
# Its run set is checked against the libraries the built programs load: the
# image's programs, so only in a build like the image's (a sanitizer build
# loads the sanitizers' runtimes and every library it links).
if(NOT DRATOPO_SANITIZE)
  add_test(NAME image_packages COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/e2e/image.sh ${PROJECT_BINARY_DIR}
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(image_packages PROPERTIES TIMEOUT 60)
endif()
# The docs' shell examples run (README.md, docs/*.md), and the example files
# they name exist (tests/e2e/docs.sh says what is left out and why).
add_test(NAME docs_e2e COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/e2e/docs.sh ${PROJECT_BINARY_DIR}
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(docs_e2e PROPERTIES TIMEOUT 300)
