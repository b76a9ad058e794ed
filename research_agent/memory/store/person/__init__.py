"""Lessons from a person: the only free text that may reach a prompt, and only through a person.

* ``file``       ``reports/meta/lessons.yaml`` as a file: its entries read and checked one by one,
  and written back
* ``lessons``    that file on disk, and whether a person trusted it as it stands (its hash kept
  in the user state folder)
* ``instructions`` a text that addresses the model instead of the research, refused by its shape;
  ``output_aims`` its three families aimed at the report (output injection, format hijacking,
  exfiltration)
* ``proposals``  the critic's proposed lessons, quarantined in the critiques until a person
  approves (``memory approve``) or rejects them
"""
