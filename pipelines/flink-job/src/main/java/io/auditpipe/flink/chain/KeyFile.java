package io.auditpipe.flink.chain;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** A key file a job option names (the signing key, the link key), read as ASCII text. */
final class KeyFile {
    private KeyFile() {}

    /** The file's text; a clear error naming {@code option} and the file when it cannot be read. */
    static String read(String option, Path file) {
        try {
            return Files.readString(file, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new IllegalArgumentException(
                    option + ": cannot read " + file + ": " + e.getMessage(), e);
        }
    }
}
