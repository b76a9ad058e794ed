"""The lint's checks (:mod:`research_agent.review.lint` runs them all), one family per module.

* ``common``     what the checks share: the issue they build, the views of a parsed report they read
* ``citations``  citations to sources that do not exist, the Sources list
* ``claims``     numeric claims without a citation
* ``text``       structure, empty sections, placeholders, leaked prompt text, length
* ``debris``     debris: headings that are web addresses, text with no real words
* ``repeats``    repeated sections and paragraphs
* ``addresses``  web addresses in the prose that no source has
* ``rules``      the user's custom rules, under their time budget
"""
