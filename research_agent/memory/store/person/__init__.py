"""Lessons from a person: the only free text that may reach a prompt, and only through a person.

* ``file``       ``reports/meta/lessons.yaml`` as a file: its entries read and checked one by one,
  and written back
* ``lessons``    that file on disk, and whether a person trusted it as it stands (its hash kept
  in the user state folder)
* ``proposals``  the critic's proposed lessons, quarantined in the critiques until a person
  approves (``memory approve``) or rejects them
"""
