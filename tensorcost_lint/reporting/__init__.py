"""`tensorcost report`: the per-site cost table, the roofline picture and the HTML page.

The table is plain data (`cost_table`), shared by the text output, the picture and the page;
matplotlib is imported only when a picture is asked for.
"""
