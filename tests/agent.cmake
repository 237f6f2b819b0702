# Tests of the agent: the fake sysfs trees are built at test time into the
# build directory (agent_fixtures), then the CUnit suite and the end-to-end
# script run probe, verify and slices on every one of them.
set(DT_AGENT_FIXTURES ${PROJECT_BINARY_DIR}/fixtures/agent)

add_test(NAME agent_fixtures
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/fixtures/agent/mksysfs.sh ${DT_AGENT_FIXTURES})
set_tests_properties(agent_fixtures PROPERTIES FIXTURES_SETUP agent_sysfs TIMEOUT 600)

dt_add_suite(test_agent SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_agent.c LIBS dt_agent
             INTERNAL agent)
set_tests_properties(test_agent PROPERTIES FIXTURES_REQUIRED agent_sysfs)

# The report loop on a fake clock against a fake coordinator.
dt_add_suite(test_agent_loop SOURCES ${CMAKE_CURRENT_LIST_DIR}/unit/test_agent_loop.c
             LIBS dt_agent_run)

# dt_add_script_test comes from a fragment that sorts after this one.
add_test(NAME agent_e2e COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/e2e/agent.sh ${PROJECT_BINARY_DIR}
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(agent_e2e PROPERTIES FIXTURES_REQUIRED agent_sysfs TIMEOUT 300)

# TLS files rotated under a running agent and coordinator; the agent's
# /healthz /readyz /metrics and SIGHUP (fixture for the certificates:
# mkcerts.sh run by the script itself).
add_test(NAME rotate_e2e COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/e2e/rotate.sh ${PROJECT_BINARY_DIR}
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(rotate_e2e PROPERTIES FIXTURES_REQUIRED agent_sysfs TIMEOUT 300)
