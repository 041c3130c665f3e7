package io.auditpipe.enrich;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The first words of an SQL statement, upper case, after whitespace and comments: what the taxonomy
 * decides on. Comments are skipped as MySQL skips them ({@code /* ... *}{@code /}, {@code -- } and
 * {@code #} to the end of the line); the body of an executable comment ({@code /*!80000 ...
 * *}{@code /}) is read as code, since the server runs it. A word is a run of letters, digits and
 * underscores; a quoted name ({@code `x`}) is returned without its quotes.
 */
public final class StatementWords {
    private StatementWords() {}

    public static List<String> first(String sql, int max) {
        List<String> words = new ArrayList<>(max);
        if (sql == null) return words;
        int n = sql.length();
        int i = 0;
        while (i < n && words.size() < max) {
            char c = sql.charAt(i);
            if (Character.isWhitespace(c) || c == '(' || c == ';' || c == '.' || c == ',') {
                i++;
            } else if (c == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
                if (i + 2 < n && sql.charAt(i + 2) == '!') {
                    i += 3;
                    while (i < n && Character.isDigit(sql.charAt(i)))
                        i++; // version of an executable comment
                } else {
                    int end = sql.indexOf("*/", i + 2);
                    i = end < 0 ? n : end + 2;
                }
            } else if (c == '*' && i + 1 < n && sql.charAt(i + 1) == '/') {
                i += 2; // end of an executable comment
            } else if (c == '#'
                    || (c == '-'
                            && i + 2 < n
                            && sql.charAt(i + 1) == '-'
                            && Character.isWhitespace(sql.charAt(i + 2)))) {
                int end = sql.indexOf('\n', i);
                i = end < 0 ? n : end + 1;
            } else if (c == '`') {
                int end = sql.indexOf('`', i + 1);
                int stop = end < 0 ? n : end;
                words.add(sql.substring(i + 1, stop).toUpperCase(Locale.ROOT));
                i = stop + 1;
            } else if (Character.isLetterOrDigit(c) || c == '_' || c == '@') {
                int start = i;
                while (i < n
                        && (Character.isLetterOrDigit(sql.charAt(i))
                                || sql.charAt(i) == '_'
                                || sql.charAt(i) == '@')) i++;
                words.add(sql.substring(start, i).toUpperCase(Locale.ROOT));
            } else {
                return words; // punctuation: the words that matter come before it
            }
        }
        return words;
    }
}
