"""A whole model's result: `analyse` runs an entry, `totals` costs its recorded sites (in the rules'
words for a refusal), `report` and `report_text` write Contract 7's JSON and text, `memory_report`
the memory block. Above the rules."""
