package io.auditpipe;

import java.util.List;

/**
 * A test's table written as text: a row a line, its cells apart by '|', escapes ({@code \\n})
 * translated.
 */
public final class TextTable {
    private TextTable() {}

    public static List<String[]> rows(String table) {
        return table.lines().map(l -> l.translateEscapes().split("\\|", -1)).toList();
    }
}
