package io.auditpipe.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.nio.file.Path;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.Test;

/** The import's embedded Flink: its surface is the local stack's, its other settings its own. */
class ImportJobTest {
    @Test
    void listensOnLoopbackWithTheStacksRestTlsAndNothingElseOfTheStacks() {
        Configuration stack = new Configuration();
        stack.setString("rest.bind-address", "0.0.0.0");
        stack.setString("rest.port", "8081");
        stack.setString("security.ssl.rest.enabled", "true");
        stack.setString("web.submit.enable", "false");
        stack.setString("state.backend.type", "rocksdb");
        Map<String, String> flink = ImportJob.flinkSettings(stack, Path.of("/tmp/import")).toMap();
        for (String key :
                new String[] {
                    "rest.address",
                    "rest.bind-address",
                    "jobmanager.bind-host",
                    "taskmanager.bind-host",
                    "taskmanager.host"
                }) {
            assertEquals("127.0.0.1", flink.get(key), key);
        }
        assertEquals("true", flink.get("security.ssl.rest.enabled"));
        assertEquals("false", flink.get("web.submit.enable"));
        assertEquals(
                "0", flink.get("rest.bind-port"), "a port of its own, beside a running stack's");
        assertFalse(flink.containsKey("rest.port"));
        assertFalse(flink.containsKey("state.backend.type"));
    }
}
