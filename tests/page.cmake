# The topology drawing (dt_draw) and the coordinator's status pages
# (dt_page): CUnit suites on the fixtures' topologies and on views with
# hostile strings, and the pages in headless Chromium against a
# coordinator fed by agents (page_e2e; needs chromium and chromium-driver,
# which tools/dev installs). Its screenshots stay in BUILD/page-artifacts.
dt_add_script_test(page_e2e ${CMAKE_CURRENT_LIST_DIR}/e2e/page.sh)
set_tests_properties(page_e2e PROPERTIES FIXTURES_REQUIRED agent_sysfs TIMEOUT 300
                     ENVIRONMENT "GRPC_VERBOSITY=NONE")

dt_add_suite(test_draw SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_draw.c LIBS dt_draw dt_agent)
set_tests_properties(test_draw PROPERTIES FIXTURES_REQUIRED agent_sysfs)

dt_add_suite(test_page SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_page.c LIBS dt_page dt_agent)
set_tests_properties(test_page PROPERTIES FIXTURES_REQUIRED agent_sysfs)
