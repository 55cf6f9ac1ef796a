"""How the studio looks: themes, colours and contrast, icons, the code editor's colours, highlighting, marks."""
